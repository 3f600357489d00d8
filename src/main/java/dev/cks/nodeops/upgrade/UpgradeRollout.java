package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes an upgrade works on now. Pure. Control-plane nodes go one at a time, the first alone, and
 * before any worker (a kubelet must not be newer than its API server). Workers then go up to
 * maxUnavailable at once, where the selected workers that are NotReady or cordoned by someone else count
 * as unavailable already (as Karpenter's disruption budgets count them) - except a node this upgrade has
 * upgraded and left cordoned because it found it so.
 */
final class UpgradeRollout {
    /**
     * @param inProgress nodes begun and not yet given back (a failed node until its ISO is detached and it is released)
     * @param toStart Pending nodes that may start now, in plan order
     * @param limit why no further node starts now; empty when nothing is left to start
     */
    record Selection(List<UpgradeNodeStatus> inProgress, List<UpgradeNodeStatus> toStart, String limit) {
    }

    private UpgradeRollout() {
    }

    static boolean inProgress(UpgradeNodeStatus node) {
        return switch (node.getPhase()) {
            case Cordoned, Draining, Upgrading, WaitingReady, Soaking -> true;
            // completedAt marks a failed node given back.
            case Failed -> node.getCompletedAt() == null;
            case Pending, Skipped, Succeeded -> false;
        };
    }

    /**
     * @param cluster the planned Nodes as read now (others are not looked at; a missing one counts as unavailable)
     * @param owner this upgrade's lock owner, {@code NodeUpgrade/<name>}
     * @param mayStart false while new work is held (paused, outside the window, a node failed, the deadline passed)
     */
    static Selection select(List<UpgradeNodeStatus> nodes, List<Node> cluster, IntOrString maxUnavailable, String owner, boolean mayStart) {
        List<UpgradeNodeStatus> active = nodes.stream().filter(UpgradeRollout::inProgress).toList();
        List<UpgradeNodeStatus> pending = nodes.stream().filter(n -> n.getPhase() == Phase.Pending).toList();
        if (!mayStart || pending.isEmpty()) {
            return new Selection(active, List.of(), "");
        }
        boolean controlPlaneLeft = nodes.stream().anyMatch(n -> n.getRole() == NodeRole.ControlPlane && (n.getPhase() == Phase.Pending || inProgress(n)));
        if (controlPlaneLeft) {
            if (!active.isEmpty()) {
                return new Selection(active, List.of(), "control-plane nodes are upgraded one at a time, "
                        + active.stream().map(UpgradeNodeStatus::getName).collect(Collectors.joining(", ")) + " first");
            }
            UpgradeNodeStatus next = pending.stream().filter(n -> n.getRole() == NodeRole.ControlPlane).findFirst().orElseThrow();
            return new Selection(active, List.of(next), "control-plane nodes are upgraded one at a time");
        }
        List<UpgradeNodeStatus> workers = nodes.stream().filter(n -> n.getRole() == NodeRole.Worker).toList();
        int budget = allowed(maxUnavailable, workers.size());
        Map<String, Node> byName = cluster.stream().collect(Collectors.toMap(n -> n.getMetadata().getName(), Function.identity(), (a, b) -> a));
        Set<String> unavailable = new LinkedHashSet<>();
        active.forEach(n -> unavailable.add(n.getName()));
        for (UpgradeNodeStatus worker : workers) {
            Node node = byName.get(worker.getName());
            if (worker.getPhase() == Phase.Skipped && node == null) {
                // Skipped because its Node was deleted: capacity the cluster no longer has, not capacity out of service.
                continue;
            }
            if (isUnavailable(node, owner) && !keptCordonedAsFound(worker, node)) {
                unavailable.add(worker.getName());
            }
        }
        List<UpgradeNodeStatus> toStart = new ArrayList<>();
        for (UpgradeNodeStatus candidate : pending) {
            Set<String> with = new LinkedHashSet<>(unavailable);
            with.add(candidate.getName());
            if (with.size() > budget) {
                // A later node that is unavailable anyway may still start: it costs nothing.
                continue;
            }
            unavailable.add(candidate.getName());
            toStart.add(candidate);
        }
        String limit = toStart.size() == pending.size() ? "" : "maxUnavailable " + maxUnavailable(maxUnavailable) + " allows " + budget
                + " of " + workers.size() + " selected worker(s) to be unavailable at once; unavailable now: " + String.join(", ", unavailable);
        return new Selection(active, toStart, limit);
    }

    /** A count, or a percentage of the selected workers rounded down; at least 1. */
    static int allowed(IntOrString maxUnavailable, int workers) {
        if (maxUnavailable == null) {
            return 1;
        }
        if (maxUnavailable.getIntVal() != null) {
            return Math.max(1, maxUnavailable.getIntVal());
        }
        String text = maxUnavailable.getStrVal().strip();
        int percent = Integer.parseInt(text.endsWith("%") ? text.substring(0, text.length() - 1) : text);
        return Math.max(1, percent * workers / 100);
    }

    /** NotReady, gone, or cordoned by someone other than this upgrade. */
    static boolean isUnavailable(Node node, String owner) {
        if (node == null || !NodeReadiness.isReady(node)) {
            return true;
        }
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        String cordonedBy = annotations == null ? null : annotations.get(NodeAnnotations.CORDONED_BY);
        return NodeReadiness.isUnschedulable(node) && !owner.equals(cordonedBy);
    }

    /**
     * Upgraded, Ready, and cordoned only because it was cordoned when this upgrade took it: the upgrade
     * gave it back as it found it. Counting that cordon would stall the rest of the upgrade for as long
     * as its owner keeps it, for capacity that was gone before the upgrade began.
     */
    private static boolean keptCordonedAsFound(UpgradeNodeStatus worker, Node node) {
        return worker.getPhase() == Phase.Succeeded && Boolean.FALSE.equals(worker.getCordonedByUs()) && node != null && NodeReadiness.isReady(node);
    }

    private static String maxUnavailable(IntOrString value) {
        return value == null ? "1" : value.getIntVal() != null ? value.getIntVal().toString() : value.getStrVal();
    }
}
