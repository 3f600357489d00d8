package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.operation.FinishEstimate;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

/**
 * A NodeUpgrade's plan as {@link FinishEstimate} reads it: its control-plane nodes one at a time, then its workers
 * as many at once as maxUnavailable allows ({@link UpgradeRollout}). A node's time runs from its cordon to the end of
 * its soak, so a measured node includes its drain, Job, Ready wait and soak; a prior gets spec.soakSeconds added. Pure.
 */
final class UpgradeEstimate {
    static final String CONTROL_PLANE = "control-plane";
    static final String WORKER = "worker";

    private UpgradeEstimate() {
    }

    static Optional<FinishEstimate.Estimate> of(NodeUpgradeSpec spec, List<UpgradeNodeStatus> nodes, OperatorSettings.Estimate priors, Instant now) {
        return FinishEstimate.of(plan(spec, nodes, priors), spec.getWindow(), now);
    }

    static FinishEstimate.Plan plan(NodeUpgradeSpec spec, List<UpgradeNodeStatus> nodes, OperatorSettings.Estimate priors) {
        Duration soak = Duration.ofSeconds(spec.getSoakSeconds() == null ? 0 : spec.getSoakSeconds());
        long workers = nodes.stream().filter(n -> n.getRole() == NodeRole.Worker).count();
        List<FinishEstimate.Finished> finished = nodes.stream()
                .filter(n -> n.getPhase() == Phase.Succeeded && n.getStartedAt() != null && n.getCompletedAt() != null)
                .map(n -> new FinishEstimate.Finished(kind(n), Duration.between(Timestamps.parse(n.getStartedAt()), Timestamps.parse(n.getCompletedAt()))))
                .toList();
        return new FinishEstimate.Plan(List.of(
                new FinishEstimate.Stage(left(nodes, NodeRole.ControlPlane), 1),
                new FinishEstimate.Stage(left(nodes, NodeRole.Worker), UpgradeRollout.allowed(spec.getMaxUnavailable(), (int) workers))),
                finished, Map.of(
                        CONTROL_PLANE, Duration.ofSeconds(priors.controlPlaneUpgradeSeconds()).plus(soak),
                        WORKER, Duration.ofSeconds(priors.workerUpgradeSeconds()).plus(soak)));
    }

    /** Nodes to upgrade that are not done: pending, or begun and not failed (a failed node starts nothing more). */
    private static List<FinishEstimate.Work> left(List<UpgradeNodeStatus> nodes, NodeRole role) {
        return nodes.stream().filter(n -> n.getRole() == role)
                .filter(n -> n.getPhase() == Phase.Pending || n.getPhase() != Phase.Failed && UpgradeRollout.inProgress(n))
                .map(n -> new FinishEstimate.Work(kind(n), n.getPhase() == Phase.Pending ? null : Timestamps.parse(n.getStartedAt())))
                .toList();
    }

    private static String kind(UpgradeNodeStatus node) {
        return node.getRole() == NodeRole.ControlPlane ? CONTROL_PLANE : WORKER;
    }
}
