package dev.cks.nodeops.testing;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.drain.BlockedByReport.BudgetHold;
import dev.cks.nodeops.drain.DrainEscalation;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainResult.PodsLeft;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.EvictionApi;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.nodes.CordonRecord;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.operation.NodeWork;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * Nodes in memory, with the lock and cordon rules of the real ones (annotations on the node decide),
 * drains that answer what a test scripted, and a log of every call in order.
 */
public final class FakeNodeWork implements NodeWork {
    private final Map<String, Node> nodes = new LinkedHashMap<>();
    private final Map<String, Deque<BiFunction<DrainState, Instant, DrainResult>>> drains = new HashMap<>();
    private final Map<String, RuntimeException> cordonErrors = new HashMap<>();
    private final Map<String, String> cordonRefusals = new HashMap<>();
    public final List<String> calls = new ArrayList<>();
    public Map<String, Integer> evictable = new HashMap<>();
    /** What the API server answers the escalation ladder's pod deletions. */
    public EvictionApi.Answer deletionAnswer = new EvictionApi.Answer(200, "accepted", List.of());
    /** Workloads (as drains record them) not Ready again, with their numbers. */
    public final Map<String, String> notReady = new HashMap<>();
    public PreflightPrediction.Report prediction = new PreflightPrediction.Report(Map.of(), List.of());

    public FakeNodeWork add(Node node) {
        nodes.put(node.getMetadata().getName(), node);
        return this;
    }

    public Node get(String name) {
        return nodes.get(name);
    }

    public boolean isCordoned(String name) {
        return NodeReadiness.isUnschedulable(nodes.get(name));
    }

    /** Annotations this operator writes that a node still carries. */
    public Map<String, String> ours(String name) {
        Map<String, String> ours = new LinkedHashMap<>();
        Map<String, String> annotations = nodes.get(name).getMetadata().getAnnotations();
        for (String key : List.of(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY)) {
            if (annotations.containsKey(key)) {
                ours.put(key, annotations.get(key));
            }
        }
        return ours;
    }

    /** The next drain step of this node answers this. */
    public FakeNodeWork thenDrain(String node, BiFunction<DrainState, Instant, DrainResult> answer) {
        drains.computeIfAbsent(node, n -> new ArrayDeque<>()).add(answer);
        return this;
    }

    /** Cordoning this node is refused for good (e.g. forbidden). */
    public FakeNodeWork refuseCordon(String node, String reason) {
        cordonRefusals.put(node, reason);
        return this;
    }

    /** Cordoning this node throws (an API error that may pass); null: it works again. */
    public FakeNodeWork failCordon(String node, RuntimeException error) {
        if (error == null) {
            cordonErrors.remove(node);
        } else {
            cordonErrors.put(node, error);
        }
        return this;
    }

    public static DrainResult done(DrainState state) {
        return DrainResult.done(state);
    }

    /** A step that evicted some pods: the drain is moving. */
    public static DrainResult moving(DrainState state, Instant nextLook, int remaining) {
        state.setAttempt(1);
        return DrainResult.inProgress(state, "", nextLook, new PodsLeft(remaining, List.of(), true, List.of()));
    }

    /** A step in which budgets kept these pods (namespace/name, app label = the name's first part) and none left. */
    public static DrainResult heldPods(DrainState state, Instant nextLook, String budget, String numbers, String... pods) {
        state.setAttempt(1);
        List<DrainEscalation.HeldPod> held = java.util.Arrays.stream(pods).map(ref -> new DrainEscalation.HeldPod(
                new EvictionApi.PodRef(ref.split("/")[0], ref.split("/")[1], "uid-" + ref), Map.of("app", ref.split("/")[1].split("-")[0]), budget))
                .toList();
        return DrainResult.inProgress(state, "pods held by pdb " + budget, nextLook, new PodsLeft(pods.length,
                List.of(new BudgetHold(budget, "pdb " + budget + ": " + numbers + " (pods " + String.join(", ", pods) + ")")), false, held));
    }

    /** A step in which a budget kept every remaining pod and none left. */
    public static DrainResult heldBy(DrainState state, Instant nextLook, String budget, String numbers, int remaining) {
        state.setAttempt(1);
        return DrainResult.inProgress(state, "pods held by pdb " + budget, nextLook,
                new PodsLeft(remaining, List.of(new BudgetHold(budget, "pdb " + budget + ": " + numbers)), false, List.of()));
    }

    public static DrainResult givesUp(DrainState state, String report) {
        return DrainResult.gaveUp(state, report, PodsLeft.of(1));
    }

    @Override
    public List<Node> nodes() {
        return List.copyOf(nodes.values());
    }

    @Override
    public Optional<Node> node(String name) {
        return Optional.ofNullable(nodes.get(name));
    }

    /** What happens in the world just before a node is locked (another operator's reconcile, for one). */
    public java.util.function.Consumer<String> beforeLock = node -> { };

    @Override
    public NodeLock.Outcome lock(String node, String owner) {
        beforeLock.accept(node);
        calls.add("lock " + node);
        Node current = nodes.get(node);
        NodeLock.Outcome outcome = NodeLock.decide(current, owner, this::ownerGone);
        if (outcome instanceof NodeLock.Acquired || outcome instanceof NodeLock.Reclaimed) {
            Optional<String> from = outcome instanceof NodeLock.Reclaimed reclaimed ? Optional.of(reclaimed.from()) : Optional.empty();
            applyAnnotations(current, NodeLock.lockPatch(current, owner, from));
        }
        return outcome;
    }

    /** Operations the test deleted: their locks and cordons may be reclaimed. */
    public final java.util.Set<String> goneOwners = new java.util.HashSet<>();

    @Override
    public boolean ownerGone(String owner) {
        return goneOwners.contains(owner);
    }

    @Override
    public Cordoning cordon(String node, String owner) {
        calls.add("cordon " + node);
        if (cordonErrors.containsKey(node)) {
            throw cordonErrors.get(node);
        }
        if (cordonRefusals.containsKey(node)) {
            return new NotCordoned(cordonRefusals.get(node));
        }
        Node current = nodes.get(node);
        if (current == null) {
            return new NotCordoned("Node " + node + " does not exist.");
        }
        if (Cordon.decide(current, owner) == Cordon.Decision.CORDONED_BEFORE) {
            return new Cordoned(new CordonRecord(node, false, true, "Node " + node + " was already unschedulable; this operation will leave it cordoned."));
        }
        current.getSpec().setUnschedulable(true);
        current.getMetadata().getAnnotations().put(NodeAnnotations.CORDONED_BY, owner);
        return new Cordoned(new CordonRecord(node, true, true, ""));
    }

    @Override
    public DrainResult drain(String node, String owner, DrainOptions options, DrainState state, Instant deadline, Instant now) {
        calls.add("drain " + node);
        Deque<BiFunction<DrainState, Instant, DrainResult>> script = drains.get(node);
        DrainState next = DrainState.copyOf(state);
        return script == null || script.isEmpty() ? done(next) : script.poll().apply(next, now);
    }

    @Override
    public Map<EvictionApi.PodRef, EvictionApi.Answer> deletePods(List<DrainEscalation.Deletion> deletions) {
        Map<EvictionApi.PodRef, EvictionApi.Answer> answers = new LinkedHashMap<>();
        for (DrainEscalation.Deletion deletion : deletions) {
            calls.add("delete pod " + deletion.pod().ref() + " grace " + deletion.gracePeriodSeconds());
            answers.put(deletion.pod(), deletionAnswer);
        }
        return answers;
    }

    @Override
    public boolean release(String node, String owner, boolean uncordon) {
        calls.add("release " + node + (uncordon ? " uncordon" : ""));
        Node current = nodes.get(node);
        if (current == null) {
            return false;
        }
        boolean uncordoned = uncordon && Cordon.mayUncordon(current, owner);
        if (uncordoned) {
            current.getSpec().setUnschedulable(null);
            current.getMetadata().getAnnotations().remove(NodeAnnotations.CORDONED_BY);
        }
        if (NodeLock.holder(current).map(holder -> NodeLock.names(holder, owner)).orElse(false)) {
            applyAnnotations(current, NodeLock.releasePatch(current, owner));
        }
        return uncordoned;
    }

    /** The annotations of a merge patch as the API server applies them: null removes. */
    private static void applyAnnotations(Node node, String mergePatch) {
        Serialization.unmarshal(mergePatch, Node.class).getMetadata().getAnnotations().forEach((key, value) -> {
            if (value == null) {
                node.getMetadata().getAnnotations().remove(key);
            } else {
                node.getMetadata().getAnnotations().put(key, value);
            }
        });
    }

    @Override
    public void delete(String node) {
        calls.add("delete " + node);
        nodes.remove(node);
    }

    @Override
    public PreflightPrediction.Report preflight(List<String> names, Draining draining, DrainOptions options, Instant now) {
        calls.add("preflight " + String.join(",", names));
        return prediction;
    }

    @Override
    public List<String> workloadsNotReady(List<String> workloads) {
        calls.add("workloads " + String.join(",", workloads));
        return workloads.stream().filter(notReady::containsKey).map(w -> w + " (" + notReady.get(w) + ")").toList();
    }

    @Override
    public Map<String, Integer> evictablePods(DrainOptions options, Instant now) {
        return evictable;
    }

    /** An API error that may pass (the reconcile is retried). */
    public static KubernetesClientException apiDown() {
        return new KubernetesClientException("connection refused: the API server is restarting", 503, null);
    }
}
