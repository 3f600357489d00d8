package dev.cks.nodeops.drainability;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.drain.DisruptionBudgets;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.PodDrainPolicy;
import dev.cks.nodeops.drain.PodFilters;
import dev.cks.nodeops.drain.PodVerdict;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.upgrade.NodeSelection;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;

/**
 * Could each node be drained now, alone, and if not, why: the operations' scheduling-aware preflight
 * ({@link PreflightPrediction}) run for one node at a time on one reading of the cluster, plus the node's own
 * opt-out. Pure. No dry-run evictions: a report that runs every few minutes over every node must only read,
 * so a budget blocks by its status numbers (0 disruptions allowed) or by replacements that fit nowhere.
 */
public final class Drainability {
    /** Why a node cannot be drained now. */
    public enum Cause {
        /** The node carries nodeops.cks.dev/exclude: every operation leaves it out. */
        OptedOut,
        /** A PodDisruptionBudget allows no disruption of a pod on the node. */
        PodDisruptionBudget,
        /** A budget allows some disruptions, too few, and the replacements it waits for fit on no other node (pinned, no room, taints). */
        NoRoomForReplacements,
        /** A pod no controller manages (the drain would lose it; force: true lets it go). */
        BarePod,
        /** A pod with emptyDir data (deleteEmptyDirData: false). */
        LocalStorage,
        /** A DaemonSet pod (ignoreDaemonSets: false). */
        DaemonSet,
        /** A pod whose nodeops.cks.dev/drain annotation the drain cannot read. */
        PodPolicy
    }

    /** One paged list each of the cluster's Nodes, pods and PodDisruptionBudgets, read in one pass. */
    public record Reading(List<Node> nodes, List<Pod> pods, List<PodDisruptionBudget> budgets) {
    }

    /** @param causes empty when the node could be drained now */
    public record Verdict(String node, Set<Cause> causes, List<String> reasons) {
        public boolean drainable() {
            return causes.isEmpty();
        }
    }

    private Drainability() {
    }

    /**
     * The verdict of every node the selector selects, by name.
     *
     * @throws dev.cks.nodeops.drain.PodSelector.InvalidSelector when the podSelector cannot be parsed
     */
    public static List<Verdict> assess(Reading reading, NodeSelection selection, DrainOptions options, Instant now) {
        PodFilters filters = PodFilters.forOptions(options, now);
        Map<String, List<Pod>> podsByNode = PreflightPrediction.podsByNode(reading.pods());
        return reading.nodes().stream().filter(selection::selects)
                .sorted(Comparator.comparing(node -> node.getMetadata().getName()))
                .map(node -> assess(node, reading, podsByNode, filters, options)).toList();
    }

    private static Verdict assess(Node node, Reading reading, Map<String, List<Pod>> podsByNode, PodFilters filters, DrainOptions options) {
        String name = node.getMetadata().getName();
        Set<Cause> causes = EnumSet.noneOf(Cause.class);
        List<String> reasons = new ArrayList<>();
        NodeAnnotations.excluded(node).ifPresent(why -> {
            causes.add(Cause.OptedOut);
            reasons.add("node " + name + " is left out of every node operation: " + why + "; remove the annotation to let them drain it");
        });
        Map<String, Map<Pod, PodVerdict>> verdicts = PreflightPrediction.verdicts(List.of(name), podsByNode, filters);
        verdicts.get(name).forEach((pod, verdict) -> {
            if (verdict.action() == PodVerdict.Action.REFUSE) {
                causes.add(refusal(pod, options));
                reasons.add(verdict.reason());
            }
        });
        // Where replacements could go matters only to a budget that allows some disruptions, fewer than the node's pods
        // under it: it lets the rest go as replacements become Ready. A pod under no budget goes at once, and a budget
        // at 0 blocks whatever the scheduler could do. Placing only those pods keeps a pass at 1,000 nodes from
        // replaying the scheduler for every pod of the cluster (docs/benchmarks.md, "DrainReport at 1,000 nodes").
        Map<String, List<Pod>> waitingForReplacements = new LinkedHashMap<>();
        PreflightPrediction.evicted(verdicts).forEach((n, pods) -> {
            List<Pod> waiting = pods.stream().filter(pod -> DisruptionBudgets.covering(pod, reading.budgets()).stream()
                    .anyMatch(budget -> exceeded(budget, pods))).toList();
            if (!waiting.isEmpty()) {
                waitingForReplacements.put(n, waiting);
            }
        });
        PreflightPrediction.Replacements replacements = PreflightPrediction.replacements(waitingForReplacements, Draining.ONE_AT_A_TIME,
                reading.nodes(), reading.pods(), Drainability::workloadOf);
        PreflightPrediction.predict(verdicts, reading.budgets(), Map.of(), Draining.ONE_AT_A_TIME, replacements).budgets().stream()
                .filter(PreflightPrediction.BudgetPressure::blocks).forEach(budget -> {
                    // A budget that allows no disruption blocks whatever the scheduler could do: no replacement is made
                    // before a pod goes. Only a budget that allows some is held up by replacements with nowhere to go.
                    boolean homeless = budget.unschedulable() != null && budget.numbers().disruptionsAllowed() > 0;
                    causes.add(homeless ? Cause.NoRoomForReplacements : Cause.PodDisruptionBudget);
                    reasons.add(budget.describe());
                });
        return new Verdict(name, causes, reasons);
    }

    /** Whether the budget allows some disruptions, but fewer than it would take to evict its pods among these at once. */
    private static boolean exceeded(PodDisruptionBudget budget, List<Pod> evicted) {
        int allowed = DisruptionBudgets.numbers(budget).disruptionsAllowed();
        return allowed > 0 && evicted.stream().filter(pod -> !DisruptionBudgets.covering(pod, List.of(budget)).isEmpty()).count() > allowed;
    }

    /** Which of the drain's filters refuses the pod, in the filters' own order. */
    private static Cause refusal(Pod pod, DrainOptions options) {
        if (PodDrainPolicy.behavior(pod).action() == PodVerdict.Action.REFUSE) {
            return Cause.PodPolicy;
        }
        if (PodFilters.daemonSet(pod, !Boolean.FALSE.equals(options.getIgnoreDaemonSets())).action() == PodVerdict.Action.REFUSE) {
            return Cause.DaemonSet;
        }
        if (PodFilters.localStorage(pod, !Boolean.FALSE.equals(options.getDeleteEmptyDirData())).action() == PodVerdict.Action.REFUSE) {
            return Cause.LocalStorage;
        }
        return Cause.BarePod;
    }

    /** "Deployment ns/name" for a pod of a Deployment's ReplicaSet, else its controller, else the pod itself. */
    static String workloadOf(Pod pod) {
        OwnerReference controller = PodFilters.controllerOf(pod);
        if (controller == null) {
            return "pod " + PodFilters.name(pod);
        }
        String namespace = pod.getMetadata().getNamespace();
        String hash = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get("pod-template-hash");
        if ("ReplicaSet".equals(controller.getKind()) && hash != null && controller.getName().endsWith("-" + hash)) {
            // The Deployment controller names its ReplicaSets <deployment>-<pod-template-hash>: no read of the ReplicaSet needed.
            return "Deployment " + namespace + "/" + controller.getName().substring(0, controller.getName().length() - hash.length() - 1);
        }
        return controller.getKind() + " " + namespace + "/" + controller.getName();
    }
}
