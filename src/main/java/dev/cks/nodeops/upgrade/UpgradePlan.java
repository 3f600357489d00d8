package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.nodes.VersionMatch;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes an upgrade touches, in which order, and what runs on each. Pure.
 *
 * The first control-plane node is the selected control-plane node created first (oldest
 * creationTimestamp, then name): CKS creates its first control node before all others and runs
 * `kubeadm init` there. It gets `kubeadm upgrade apply` (kubeadm accepts that on any control-plane
 * node, once per version) unless the control plane was upgraded already: when any control-plane
 * node of the cluster, selected or not, is Ready at the target, no node gets `apply` again. A node that
 * opts out ({@link NodeAnnotations#EXCLUDE}) is skipped with its reason.
 */
public final class UpgradePlan {
    static final String CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";
    static final String LEGACY_MASTER_LABEL = "node-role.kubernetes.io/master";

    private UpgradePlan() {
    }

    /**
     * @param allNodes every Node of the cluster
     * @param selection the nodes the upgrade selects
     * @return one Pending (or Skipped) entry per selected node: the first control-plane node, the other
     *     control-plane nodes, then the workers
     */
    public static List<UpgradeNodeStatus> plan(List<Node> allNodes, NodeSelection selection, String targetVersion) {
        List<Node> selected = allNodes.stream().filter(selection::selects).sorted(ORDER).toList();
        boolean controlPlaneDone = allNodes.stream().anyMatch(n -> isControlPlane(n) && isReadyAt(n, targetVersion));
        // kubeadm upgrade apply runs on the first control-plane node this upgrade may touch.
        Optional<String> firstControlPlane = firstControlPlane(selected.stream().filter(n -> NodeAnnotations.excluded(n).isEmpty()).toList());
        List<Node> ordered = new ArrayList<>();
        selected.stream().filter(n -> firstControlPlane.map(name(n)::equals).orElse(false)).forEach(ordered::add);
        selected.stream().filter(n -> isControlPlane(n) && !ordered.contains(n)).forEach(ordered::add);
        selected.stream().filter(n -> !isControlPlane(n)).forEach(ordered::add);

        List<UpgradeNodeStatus> entries = new ArrayList<>();
        for (Node node : ordered) {
            UpgradeNodeStatus entry = new UpgradeNodeStatus();
            entry.setName(name(node));
            entry.setRole(isControlPlane(node) ? NodeRole.ControlPlane : NodeRole.Worker);
            entry.setFromVersion(NodeReadiness.kubeletVersion(node));
            Optional<String> excluded = NodeAnnotations.excluded(node);
            if (isReadyAt(node, targetVersion)) {
                // Done already (an earlier run, or by hand): no Job, and no second `kubeadm upgrade apply`.
                entry.setAction(UpgradeNodeStatus.Action.Skip);
                entry.setPhase(UpgradeNodeStatus.Phase.Skipped);
                entry.setVersion(NodeReadiness.kubeletVersion(node));
                entry.setSkipReason("it is Ready at " + targetVersion + " already");
            } else if (excluded.isPresent()) {
                entry.setAction(UpgradeNodeStatus.Action.Skip);
                entry.setPhase(UpgradeNodeStatus.Phase.Skipped);
                entry.setSkipReason(excluded.get());
            } else {
                entry.setAction(!controlPlaneDone && firstControlPlane.map(name(node)::equals).orElse(false)
                        ? UpgradeNodeStatus.Action.Apply : UpgradeNodeStatus.Action.Node);
                entry.setPhase(UpgradeNodeStatus.Phase.Pending);
            }
            entries.add(entry);
        }
        return entries;
    }

    /**
     * Why a planned node is not upgraded after all when its turn comes: it opts out ({@link NodeAnnotations#EXCLUDE}),
     * or it no longer matches the selector (relabelled since the plan). Empty when it is upgraded.
     */
    static Optional<String> leftOut(Node node, NodeSelection selection) {
        Optional<String> excluded = NodeAnnotations.excluded(node);
        if (excluded.isPresent() || selection.selects(node)) {
            return excluded;
        }
        return Optional.of("it no longer matches the selector " + selection + " (its labels changed after the plan)");
    }

    /** Ready and reporting exactly the target version: the one test for "this node is done". */
    public static boolean isReadyAt(Node node, String targetVersion) {
        return NodeReadiness.isReady(node) && VersionMatch.matches(NodeReadiness.kubeletVersion(node), targetVersion);
    }

    public static boolean isControlPlane(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        return labels != null && (labels.containsKey(CONTROL_PLANE_LABEL) || labels.containsKey(LEGACY_MASTER_LABEL));
    }

    static Optional<String> firstControlPlane(List<Node> nodes) {
        return nodes.stream().filter(UpgradePlan::isControlPlane).sorted(ORDER).map(UpgradePlan::name).findFirst();
    }

    /** Oldest first, then by name: deterministic even when nodes were created in the same second. */
    private static final Comparator<Node> ORDER = Comparator
            .comparing((Node n) -> Optional.ofNullable(Timestamps.parse(n.getMetadata().getCreationTimestamp()))
                    .orElse(java.time.Instant.MAX))
            .thenComparing(UpgradePlan::name);

    private static String name(Node node) {
        return node.getMetadata().getName();
    }
}
