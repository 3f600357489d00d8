package dev.cks.nodeops.scaledown;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.operation.PermissionPreflight;
import dev.cks.nodeops.operation.PermissionPreflight.Need;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalCommand;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes a ScaleDown removes, and why it refuses to start: pure functions of the nodes and the
 * CKS cluster as read, so every refusal is unit-tested without a cluster. Each refusal is a sentence
 * naming the node and saying what to do.
 */
final class ScaleDownTargets {
    static final String CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";
    /** Clusters created before Kubernetes 1.20 still carry the old label. */
    static final String LEGACY_MASTER_LABEL = "node-role.kubernetes.io/master";

    /** A worker count-based selection may pick, with what it would cost to drain it. */
    record Candidate(String name, int evictablePods, Instant created) {
    }

    private ScaleDownTargets() {
    }

    /**
     * FewestPods: the fewest evictable pods first (least disruption); among equals the newest node
     * first (it holds the least long-lived state and cache), then by name so the pick is stable.
     */
    static List<String> fewestPods(int count, List<Candidate> candidates) {
        return candidates.stream()
                .sorted(Comparator.comparingInt(Candidate::evictablePods)
                        .thenComparing(Candidate::created, Comparator.nullsLast(Comparator.reverseOrder()))
                        .thenComparing(Candidate::name))
                .limit(count)
                .map(Candidate::name)
                .toList();
    }

    /**
     * Nodes count-based selection may pick: Ready, schedulable workers with a VM CloudStack created in the
     * cluster's map, locked by no other live operation. External nodes (4.21+) are hosts someone added on
     * purpose, removed by another call that keeps their VMs: a count never picks them (so never a mix of
     * both kinds); they go only when named in spec.nodeNames.
     */
    static boolean isCandidate(Node node, KubernetesCluster cluster, String owner, Predicate<String> gone) {
        return isSchedulableReadyWorker(node)
                && NodeAnnotations.excluded(node).isEmpty()
                && otherHolder(node, owner, gone).isEmpty()
                && vmOf(node.getMetadata().getName(), cluster).filter(vm -> !vm.isExternalNode()).isPresent();
    }

    /** The live operation other than the owner that holds the node's lock, if any (a gone owner's lock is free to take). */
    static Optional<String> otherHolder(Node node, String owner, Predicate<String> gone) {
        return NodeLock.holder(node).filter(holder -> !NodeLock.names(holder, owner) && !gone.test(holder));
    }

    /**
     * When, with the targets gone, no schedulable Ready worker would be left that no other operation holds
     * (a node another ScaleDown has locked may go too; one an upgrade holds is about to be cordoned): the
     * refusal, naming the operations that hold the other workers.
     */
    static Optional<String> noWorkerLeft(List<String> targets, Collection<Node> nodes, String owner, Predicate<String> gone) {
        List<Node> others = nodes.stream().filter(node -> !targets.contains(node.getMetadata().getName()))
                .filter(ScaleDownTargets::isSchedulableReadyWorker).toList();
        if (others.stream().anyMatch(node -> otherHolder(node, owner, gone).isEmpty())) {
            return Optional.empty();
        }
        String held = others.stream().map(node -> node.getMetadata().getName() + " (locked by "
                + otherHolder(node, owner, gone).map(NodeLock::display).orElse("?") + ")").collect(Collectors.joining(", "));
        return Optional.of("Removing " + String.join(", ", targets) + " would leave no schedulable Ready worker node for the pods"
                + (others.isEmpty() ? "" : ": the other workers are held by other operations: " + held)
                + "; keep at least one worker (or add one first), or wait until those operations have finished.");
    }

    /**
     * The cluster's workers another live operation holds, with that operation (e.g. "w1, w2 locked by
     * ScaleDown/shrink-a"), so that a refusal names what it collided with; empty when none is held.
     */
    static Optional<String> heldByOthers(Collection<Node> nodes, KubernetesCluster cluster, String owner, Predicate<String> gone) {
        Map<String, List<String>> byHolder = nodes.stream()
                .filter(node -> !isControlPlane(node) && vmOf(node.getMetadata().getName(), cluster).isPresent())
                .flatMap(node -> otherHolder(node, owner, gone).map(holder -> Map.entry(NodeLock.display(holder), node.getMetadata().getName())).stream())
                .collect(Collectors.groupingBy(Map.Entry::getKey, TreeMap::new, Collectors.mapping(Map.Entry::getValue, Collectors.toList())));
        return byHolder.isEmpty() ? Optional.empty() : Optional.of(byHolder.entrySet().stream()
                .map(held -> String.join(", ", held.getValue()) + " locked by " + held.getKey()).collect(Collectors.joining("; ")));
    }

    static boolean isControlPlane(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        return labels != null && (labels.containsKey(CONTROL_PLANE_LABEL) || labels.containsKey(LEGACY_MASTER_LABEL));
    }

    static boolean isSchedulableReadyWorker(Node node) {
        return !isControlPlane(node) && NodeReadiness.isReady(node) && !NodeReadiness.isUnschedulable(node);
    }

    /** Refusals that only need the Kubernetes side: unknown and control-plane nodes, other operations' locks, the last worker. */
    static List<String> refusals(List<String> targets, Map<String, Node> nodesByName, String owner, Predicate<String> gone) {
        List<String> refusals = new ArrayList<>();
        for (String target : targets) {
            Node node = nodesByName.get(target);
            if (node == null) {
                refusals.add("Node " + target + " does not exist; remove it from spec.nodeNames.");
                continue;
            }
            if (isControlPlane(node)) {
                refusals.add("Node " + target + " is a control-plane node; a ScaleDown removes workers only, so remove it from spec.nodeNames.");
            }
            NodeAnnotations.excluded(node).ifPresent(why -> refusals.add("Node " + target + " is left out: " + why
                    + "; remove it from spec.nodeNames, or remove the annotation if it may go."));
            otherHolder(node, owner, gone).ifPresent(holder -> refusals.add("Node " + target + " is locked by " + NodeLock.display(holder)
                    + "; wait until that operation has finished (or delete it), then create this ScaleDown again."));
        }
        noWorkerLeft(targets, nodesByName.values(), owner, gone).ifPresent(refusals::add);
        return refusals;
    }

    /**
     * The CloudStack call that removes these VMs under spec.removal: DestroyVM destroys each; CloudStackScale
     * scales them away, unless every one is an external node (CloudStack 4.21+; scaleKubernetesCluster's
     * nodeids skip those), which removeNodesFromKubernetesCluster removes. Empty for a mix of external and
     * CloudStack-created nodes: no one call removes both ({@link #cloudStackRefusals} refuses it).
     */
    static Optional<RemovalCommand> removalCommand(ScaleDownSpec.Removal removal, Collection<VirtualMachine> vms) {
        if (removal == ScaleDownSpec.Removal.DestroyVM) {
            return Optional.of(RemovalCommand.destroyVirtualMachine);
        }
        long external = vms.stream().filter(VirtualMachine::isExternalNode).count();
        if (external == 0) {
            return Optional.of(RemovalCommand.scaleKubernetesCluster);
        }
        return external == vms.size() ? Optional.of(RemovalCommand.removeNodesFromKubernetesCluster) : Optional.empty();
    }

    /** Every command a removal by this call sends, for the permission preflight ({@link PermissionPreflight}). */
    static List<Need> cloudStackNeeds(RemovalCommand removal) {
        List<Need> needs = new ArrayList<>(List.of(PermissionPreflight.FIND_CLUSTER, PermissionPreflight.FOLLOW_JOBS, PermissionPreflight.LIST_JOBS));
        switch (removal) {
            case scaleKubernetesCluster -> needs.add(Need.of(CloudStackCommand.SCALE_KUBERNETES_CLUSTER,
                    "removes the drained nodes' VMs from the cluster"));
            case removeNodesFromKubernetesCluster -> needs.add(Need.of(CloudStackCommand.REMOVE_NODES_FROM_KUBERNETES_CLUSTER,
                    "removes the drained external nodes from the cluster"));
            case destroyVirtualMachine -> needs.addAll(List.of(
                    Need.of(CloudStackCommand.REMOVE_VIRTUAL_MACHINES_FROM_KUBERNETES_CLUSTER, "drops each drained node's VM from the VM map"),
                    Need.of(CloudStackCommand.DESTROY_VIRTUAL_MACHINE, "destroys each drained node's VM"),
                    Need.of(CloudStackCommand.LIST_VIRTUAL_MACHINES, "reads whether a VM is gone")));
        }
        return needs;
    }

    /**
     * Refusals from CloudStack's view, made before any node is cordoned: everything CloudStack would
     * refuse (or get wrong) once asked to remove the nodes, each a sentence naming the cluster or node.
     * The sources are KubernetesClusterManagerImpl.validateKubernetesClusterScaleParameters,
     * KubernetesClusterScaleWorker and KubernetesClusterRemoveWorker (see docs/cloudstack-simulator.md).
     */
    static List<String> cloudStackRefusals(List<String> targets, KubernetesCluster cluster, ScaleDownSpec.Removal removal) {
        List<String> refusals = new ArrayList<>();
        String clusterName = "CloudStack Kubernetes cluster " + cluster.name() + " (" + cluster.id() + ")";
        boolean scale = removal == ScaleDownSpec.Removal.CloudStackScale;
        if (scale && !cluster.isCloudManaged()) {
            refusals.add(clusterName + " is " + cluster.clusterType() + ": CloudStack cannot scale it; use removal: DestroyVM.");
        }
        if (removal == ScaleDownSpec.Removal.DestroyVM && cluster.isCloudManaged()) {
            refusals.add(clusterName + " is CloudManaged: use removal: CloudStackScale so that CloudStack's VM map and cluster size stay right.");
        }
        Map<String, VirtualMachine> vms = new LinkedHashMap<>();
        targets.forEach(target -> vmOf(target, cluster).ifPresent(vm -> vms.put(target, vm)));
        if (scale && cluster.isCloudManaged()) {
            Optional<RemovalCommand> command = removalCommand(removal, vms.values());
            if (command.isEmpty()) {
                refusals.add(mixed(vms, clusterName));
            } else if (command.get() == RemovalCommand.removeNodesFromKubernetesCluster) {
                removeNodesRefusal(cluster, clusterName).ifPresent(refusals::add);
            } else {
                refusals.addAll(scaleRefusals(targets, cluster, clusterName));
            }
        }
        for (String target : targets) {
            VirtualMachine vm = vms.get(target);
            if (vm == null) {
                refusals.add("Node " + target + " has no VM in the VM map of " + clusterName
                        + ", so CloudStack cannot remove it; check the cluster with a VMMapAudit or remove the node from spec.nodeNames.");
            } else if (vm.isEtcdNode()) {
                refusals.add("Node " + target + " is named like the dedicated etcd VM " + vm.name() + " of " + clusterName
                        + "; etcd nodes are no Kubernetes nodes and are never scaled down. Remove it from spec.nodeNames.");
            }
        }
        return refusals;
    }

    /** External and CloudStack-created nodes together: each kind goes by a different call, and a ScaleDown makes one removal. */
    private static String mixed(Map<String, VirtualMachine> vms, String clusterName) {
        List<String> external = vms.entrySet().stream().filter(e -> e.getValue().isExternalNode()).map(Map.Entry::getKey).toList();
        List<String> created = vms.entrySet().stream().filter(e -> !e.getValue().isExternalNode()).map(Map.Entry::getKey).toList();
        return "Nodes " + String.join(", ", external) + " were added to " + clusterName + " with addNodesToKubernetesCluster (external nodes), "
                + "nodes " + String.join(", ", created) + " were created by CloudStack: CloudStack removes external nodes with "
                + "removeNodesFromKubernetesCluster (their VMs stay) and its own with scaleKubernetesCluster (their VMs are destroyed), "
                + "and one ScaleDown makes one removal. Remove them in separate ScaleDowns: one for " + String.join(", ", external)
                + ", one for " + String.join(", ", created) + ".";
    }

    /**
     * What a removeNodesFromKubernetesCluster would fail at: CloudStack checks nothing before its job, but its
     * worker drains and resets each node over SSH from the control node and moves the cluster to RemovingNodes
     * only from Running or Alert (KubernetesCluster.State); from any other state every node fails.
     */
    private static Optional<String> removeNodesRefusal(KubernetesCluster cluster, String clusterName) {
        if (CloudStackAccess.isBusy(cluster) || "Running".equalsIgnoreCase(cluster.state()) || "Alert".equalsIgnoreCase(cluster.state())) {
            return Optional.empty();
        }
        return Optional.of(clusterName + " is in state " + cluster.state() + ": CloudStack removes external nodes only from a Running cluster "
                + "(or one in Alert), draining and resetting each over SSH from the control node. Start the cluster, then create this ScaleDown again.");
    }

    /** What a scaleKubernetesCluster with these nodeids would be refused for, or would do wrong. */
    private static List<String> scaleRefusals(List<String> targets, KubernetesCluster cluster, String clusterName) {
        List<String> refusals = new ArrayList<>();
        if (!CloudStackAccess.isBusy(cluster) && !"Running".equalsIgnoreCase(cluster.state())) {
            refusals.add(clusterName + " is in state " + cluster.state() + ": CloudStack scales a cluster only when it is Created, "
                    + "Running or Stopped, and removes nodes only from a Running one (their Nodes are drained over kubectl). "
                    + ("Alert".equalsIgnoreCase(cluster.state())
                            ? "CloudStack moves a cluster out of Alert once every VM of its map is Running again; fix the cluster, "
                            : "Start the cluster, ")
                    + "then create this ScaleDown again.");
        }
        if (cluster.isAutoscalingEnabled()) {
            refusals.add(clusterName + " has autoscaling enabled (" + cluster.minSize() + " to " + cluster.maxSize() + " workers): its "
                    + "cluster autoscaler owns the size and would add nodes back or remove others. Turn autoscaling off "
                    + "(scaleKubernetesCluster autoscalingenabled=false) or let the autoscaler scale the cluster down.");
        }
        if (cluster.kubernetesVersionId() == null) {
            refusals.add(clusterName + " has no Kubernetes version CloudStack knows (its supported version is gone): CloudStack refuses "
                    + "to scale it (\"Invalid Kubernetes version associated with Kubernetes cluster\"). Ask the CloudStack admin to fix the cluster.");
        }
        if (cluster.size() != null && targets.size() >= cluster.size()) {
            refusals.add("Removing " + targets.size() + " node(s) would leave " + clusterName + " without workers, and CloudStack refuses "
                    + "that (\"Can not remove all nodes from a cluster\"); it counts " + cluster.size() + " workers.");
        }
        return refusals;
    }

    static Optional<VirtualMachine> vmOf(String nodeName, KubernetesCluster cluster) {
        return cluster.virtualMachines().stream().filter(vm -> ClusterResolution.sameHost(nodeName, vm.name())).findFirst();
    }

    /** Why the node counts as down (then it is neither cordoned nor drained), or empty when it is up. */
    static Optional<String> downReason(Node node, Optional<VirtualMachine> vm) {
        String vmState = vm.map(VirtualMachine::state).orElse(null);
        if (vmState != null && (vmState.equalsIgnoreCase("Stopped") || vmState.equalsIgnoreCase("Stopping"))) {
            return Optional.of("its VM is " + vmState.toLowerCase(Locale.ROOT));
        }
        NodeReadiness.State state = NodeReadiness.state(node);
        return state == NodeReadiness.State.READY ? Optional.empty()
                : Optional.of("it is " + (state == NodeReadiness.State.NOT_READY ? "NotReady" : "not reporting Ready"));
    }

    static Instant createdAt(Node node) {
        return Timestamps.parse(node.getMetadata().getCreationTimestamp());
    }
}
