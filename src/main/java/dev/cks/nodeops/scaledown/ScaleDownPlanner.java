package dev.cks.nodeops.scaledown;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.PermissionPreflight;
import dev.cks.nodeops.operation.PermissionPreflight.Need;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalCommand;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes a ScaleDown removes, read from the cluster and CloudStack: the I/O half of planning.
 * The decisions (which nodes, which refusals) are the pure functions of {@link ScaleDownTargets}.
 */
final class ScaleDownPlanner {
    static final String CLOUDSTACK_BUSY = "CloudStackBusy";

    sealed interface Plan {
    }

    /** The nodes to remove, as they start (down nodes marked), in the CKS cluster found. */
    record Planned(KubernetesCluster cluster, List<ScaleDownNodeStatus> nodes) implements Plan {
        List<String> targets() {
            return nodes.stream().map(ScaleDownNodeStatus::getName).toList();
        }

        /** Nodes that are up: only these are cordoned and drained. */
        List<String> upNodes() {
            return nodes.stream().filter(n -> n.getDownReason() == null).map(ScaleDownNodeStatus::getName).toList();
        }
    }

    /** Refused: one sentence per reason, nothing touched. */
    record Refused(String message) implements Plan {
    }

    /** Not now: CloudStack cannot be asked or is changing the cluster itself. */
    record Wait(String reason, String message) implements Plan {
    }

    private final NodeWork work;
    private final CloudStackAccess cloudStack;
    private final long recheckSeconds;

    ScaleDownPlanner(NodeWork work, CloudStackAccess cloudStack, long recheckSeconds) {
        this.work = work;
        this.cloudStack = cloudStack;
        this.recheckSeconds = recheckSeconds;
    }

    Plan plan(ScaleDown resource, String owner, DrainOptions drain, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        Map<String, Node> nodesByName = work.nodes().stream()
                .collect(Collectors.toMap(n -> n.getMetadata().getName(), Function.identity(), (a, b) -> a, LinkedHashMap::new));
        KubernetesCluster cluster;
        try {
            CloudStackAccess.ClusterResolution resolution = cloudStack.resolveCluster(status.getClusterId(), nodesByName.keySet());
            if (resolution.cluster().isEmpty()) {
                return new Refused("The CloudStack Kubernetes cluster of these nodes could not be determined: " + resolution.refusal() + ".");
            }
            cluster = resolution.cluster().get();
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            return new Wait(CloudStackWait.reason(e), "CloudStack could not be asked about the cluster (" + e.getMessage()
                    + "); the scale-down has not touched any node and tries again in " + recheckSeconds + "s.");
        }
        if (CloudStackAccess.isBusy(cluster)) {
            return new Wait(CLOUDSTACK_BUSY, "CloudStack Kubernetes cluster " + cluster.name() + " is " + cluster.state()
                    + "; the scale-down waits until CloudStack has finished and looks again every " + recheckSeconds + "s.");
        }
        return planIn(cluster, nodesByName, resource, owner, drain, now);
    }

    /** The targets in the cluster found: kept from before a restart, named, or picked by count; then every refusal at once. */
    private Plan planIn(KubernetesCluster cluster, Map<String, Node> nodesByName, ScaleDown resource, String owner, DrainOptions drain,
            Instant now) {
        ScaleDownStatus status = resource.getStatus();
        ScaleDownSpec spec = resource.getSpec();
        List<String> targets;
        if (!status.getTargetNodes().isEmpty()) {
            // Picked before a restart (and maybe locked): keep the same nodes.
            targets = List.copyOf(status.getTargetNodes());
        } else if (spec.getNodeNames() != null && !spec.getNodeNames().isEmpty()) {
            targets = List.copyOf(spec.getNodeNames());
        } else {
            Optional<List<String>> picked = pickByCount(spec.getCount(), nodesByName, cluster, owner, drain, now);
            if (picked.isEmpty()) {
                return new Refused("spec.count is " + spec.getCount() + " but fewer Ready, schedulable workers of CloudStack "
                        + "Kubernetes cluster " + cluster.name() + " are free to remove"
                        + ScaleDownTargets.heldByOthers(nodesByName.values(), cluster, owner, work::ownerGone).map(held -> " (" + held + ")").orElse("")
                        + "; lower spec.count or free more workers.");
            }
            targets = picked.get();
        }

        List<String> refusals = new ArrayList<>(ScaleDownTargets.refusals(targets, nodesByName, owner, work::ownerGone));
        refusals.addAll(ScaleDownTargets.cloudStackRefusals(targets, cluster, spec.getRemoval()));
        if (!refusals.isEmpty()) {
            return new Refused(String.join("\n", refusals));
        }
        Optional<Plan> notAllowed = permissionRefusal(resource, cluster, targets);
        return notAllowed.isPresent() ? notAllowed.get() : planned(cluster, targets, nodesByName);
    }

    /** The keys may call every command the removal sends (asked once per {@link CloudStackClient#PERMISSIONS_TTL} at most). */
    private Optional<Plan> permissionRefusal(ScaleDown resource, KubernetesCluster cluster, List<String> targets) {
        List<VirtualMachine> vms = targets.stream().flatMap(target -> ScaleDownTargets.vmOf(target, cluster).stream()).toList();
        Optional<RemovalCommand> removal = ScaleDownTargets.removalCommand(resource.getSpec().getRemoval(), vms);
        if (removal.isEmpty()) {
            return Optional.empty();
        }
        List<Need> needs = ScaleDownTargets.cloudStackNeeds(removal.get());
        try {
            return PermissionPreflight.refusal("ScaleDown " + resource.getMetadata().getName(), needs,
                    cloudStack.client().permissions(PermissionPreflight.commands(needs))).map(Refused::new);
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            return Optional.of(new Wait(CloudStackWait.reason(e), "CloudStack could not be asked what these keys may call (" + e.getMessage()
                    + "); the scale-down has not touched any node and tries again in " + recheckSeconds + "s."));
        }
    }

    /** The targets as they start: Pending, with their VM, a down node marked (it is neither cordoned nor drained). */
    private static Planned planned(KubernetesCluster cluster, List<String> targets, Map<String, Node> nodesByName) {
        List<ScaleDownNodeStatus> nodes = new ArrayList<>();
        for (String target : targets) {
            Optional<VirtualMachine> vm = ScaleDownTargets.vmOf(target, cluster);
            ScaleDownNodeStatus node = new ScaleDownNodeStatus();
            node.setName(target);
            node.setRole(NodeRole.Worker);
            node.setVmId(vm.map(VirtualMachine::id).orElse(null));
            node.setPhase(Phase.Pending);
            node.setDownReason(ScaleDownTargets.downReason(nodesByName.get(target), vm).orElse(null));
            nodes.add(node);
        }
        return new Planned(cluster, nodes);
    }

    /** Whether CloudStack is changing the cluster itself (or cannot be asked): checked before each node is drained. */
    Optional<Wait> cloudStackBusy(String clusterId) {
        try {
            Optional<KubernetesCluster> cluster = cloudStack.client().findKubernetesCluster(clusterId);
            if (cluster.isPresent() && CloudStackAccess.isBusy(cluster.get())) {
                return Optional.of(new Wait(CLOUDSTACK_BUSY, "CloudStack Kubernetes cluster " + cluster.get().name() + " is "
                        + cluster.get().state() + "; the next node is drained once CloudStack has finished."));
            }
            return Optional.empty();
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            return Optional.of(new Wait(CloudStackWait.reason(e), "CloudStack could not be asked about the cluster before "
                    + "draining the next node (" + e.getMessage() + "); asking again."));
        }
    }

    /**
     * Locks every target for the owner, then checks again, with every lock in place, that a schedulable
     * worker no other operation holds remains: two ScaleDowns planned at the same moment each saw the
     * other's nodes as staying, and only the locks tell them apart (both may be refused; never both go on).
     * The refusal when another operation got a node first, a node went away, or no worker would remain.
     *
     * @param reclaimed told each lock taken over from an operation that no longer exists
     */
    Optional<String> lock(List<String> targets, String owner, Consumer<String> reclaimed) {
        for (String target : targets) {
            NodeLock.Outcome outcome = work.lock(target, owner);
            if (outcome instanceof NodeLock.HeldBy held) {
                return Optional.of("Node " + target + " was locked by " + NodeLock.display(held.owner())
                        + " while this ScaleDown started; wait until that operation has finished, then create this ScaleDown again.");
            }
            if (outcome instanceof NodeLock.NodeMissing) {
                return Optional.of("Node " + target + " was deleted while this ScaleDown started; remove it from spec.nodeNames.");
            }
            if (outcome instanceof NodeLock.Reclaimed taken) {
                reclaimed.accept("Took over the lock of node " + target + " from " + NodeLock.display(taken.from()) + ", which no longer exists.");
            }
        }
        return ScaleDownTargets.noWorkerLeft(targets, work.nodes(), owner, work::ownerGone);
    }

    /**
     * The re-check before removal: the first up node whose own annotation no longer says this ScaleDown
     * cordoned it (uncordoned by someone else, or its record is gone), so pods may have moved onto it.
     */
    Optional<String> notCordonedBy(ScaleDownStatus status, String owner) {
        return status.getNodes().stream().filter(n -> n.getPhase() != Phase.SkippedDown && n.getDownReason() == null)
                .map(ScaleDownNodeStatus::getName).filter(name -> !isCordonedBy(name, owner)).findFirst();
    }

    /** Cordoned, and cordoned by this owner as the Node's own annotation says. */
    boolean isCordonedBy(String name, String owner) {
        return work.node(name).map(node -> Cordon.mayUncordon(node, owner) && NodeReadiness.isUnschedulable(node)).orElse(false);
    }

    private Optional<List<String>> pickByCount(int count, Map<String, Node> nodesByName, KubernetesCluster cluster, String owner,
            DrainOptions drain, Instant now) {
        Map<String, Integer> evictable = work.evictablePods(drain, now);
        List<ScaleDownTargets.Candidate> candidates = nodesByName.values().stream()
                .filter(node -> ScaleDownTargets.isCandidate(node, cluster, owner, work::ownerGone))
                .map(node -> new ScaleDownTargets.Candidate(node.getMetadata().getName(),
                        evictable.getOrDefault(node.getMetadata().getName(), 0), ScaleDownTargets.createdAt(node)))
                .toList();
        List<String> picked = ScaleDownTargets.fewestPods(count, candidates);
        return picked.size() < count ? Optional.empty() : Optional.of(picked);
    }
}
