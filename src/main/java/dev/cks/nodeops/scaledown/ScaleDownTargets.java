package dev.cks.nodeops.scaledown;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
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

    /** Nodes count-based selection may pick: Ready, schedulable workers with a VM in the cluster's map, locked by nobody else. */
    static boolean isCandidate(Node node, KubernetesCluster cluster, String owner) {
        return isSchedulableReadyWorker(node)
                && NodeAnnotations.excluded(node).isEmpty()
                && NodeLock.holder(node).map(owner::equals).orElse(true)
                && vmOf(node.getMetadata().getName(), cluster).isPresent();
    }

    static boolean isControlPlane(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        return labels != null && (labels.containsKey(CONTROL_PLANE_LABEL) || labels.containsKey(LEGACY_MASTER_LABEL));
    }

    static boolean isSchedulableReadyWorker(Node node) {
        return !isControlPlane(node) && NodeReadiness.isReady(node) && !NodeReadiness.isUnschedulable(node);
    }

    /** Refusals that only need the Kubernetes side: unknown and control-plane nodes, other operations' locks, the last worker. */
    static List<String> refusals(List<String> targets, Map<String, Node> nodesByName, String owner) {
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
            NodeLock.holder(node).filter(holder -> !holder.equals(owner)).ifPresent(holder -> refusals.add("Node " + target
                    + " is locked by " + holder + "; wait until that operation has finished (or delete it), then create this ScaleDown again."));
        }
        boolean workerRemains = nodesByName.values().stream()
                .filter(node -> !targets.contains(node.getMetadata().getName()))
                .anyMatch(ScaleDownTargets::isSchedulableReadyWorker);
        if (!workerRemains) {
            refusals.add("Removing " + String.join(", ", targets) + " would leave no schedulable Ready worker node for the pods; "
                    + "keep at least one worker (or add one first).");
        }
        return refusals;
    }

    /**
     * Refusals from CloudStack's view, made before any node is cordoned: everything CloudStack would
     * refuse (or get wrong) once asked to remove the nodes, each a sentence naming the cluster or node.
     * The sources are KubernetesClusterManagerImpl.validateKubernetesClusterScaleParameters and
     * KubernetesClusterScaleWorker (see docs/cloudstack-simulator.md).
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
        if (scale && cluster.isCloudManaged()) {
            refusals.addAll(scaleRefusals(targets, cluster, clusterName));
        }
        for (String target : targets) {
            Optional<VirtualMachine> vm = vmOf(target, cluster);
            if (vm.isEmpty()) {
                refusals.add("Node " + target + " has no VM in the VM map of " + clusterName
                        + ", so CloudStack cannot remove it; check the cluster with a VMMapAudit or remove the node from spec.nodeNames.");
            } else if (vm.get().isEtcdNode()) {
                refusals.add("Node " + target + " is named like the dedicated etcd VM " + vm.get().name() + " of " + clusterName
                        + "; etcd nodes are no Kubernetes nodes and are never scaled down. Remove it from spec.nodeNames.");
            } else if (scale && vm.get().isExternalNode()) {
                refusals.add("Node " + target + " was added to " + clusterName + " with addNodesToKubernetesCluster: scaleKubernetesCluster "
                        + "skips such external nodes (yet counts them off the cluster's size). Remove it with removeNodesFromKubernetesCluster, "
                        + "or leave it out of spec.nodeNames.");
            }
        }
        return refusals;
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
