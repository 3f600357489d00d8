package dev.cks.nodeops.scaledown;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.FinishEstimate;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;

/**
 * A ScaleDown's plan as {@link FinishEstimate} reads it: its nodes drained one by one, then one removal of them all
 * through CloudStack. Cordoning every node first takes a moment and is not counted. A drain's time runs from its start
 * to its end (startedAt, completedAt of the node). Pure.
 */
final class ScaleDownEstimate {
    static final String DRAIN = "drain";
    static final String REMOVAL = "removal";

    private ScaleDownEstimate() {
    }

    static Optional<FinishEstimate.Estimate> of(ScaleDownSpec spec, ScaleDownStatus status, List<ScaleDownNodeStatus> nodes,
            OperatorSettings.Estimate priors, Instant now) {
        return FinishEstimate.of(plan(status, nodes, priors), spec.getWindow(), now);
    }

    /** @param nodes the nodes to remove (the status's, or the planner's before they are in status) */
    static FinishEstimate.Plan plan(ScaleDownStatus status, List<ScaleDownNodeStatus> nodes, OperatorSettings.Estimate priors) {
        List<FinishEstimate.Finished> drained = nodes.stream()
                .filter(n -> (n.getPhase() == Phase.Drained || n.getPhase() == Phase.Removed) && n.getStartedAt() != null && n.getCompletedAt() != null)
                .map(n -> new FinishEstimate.Finished(DRAIN, Duration.between(Timestamps.parse(n.getStartedAt()), Timestamps.parse(n.getCompletedAt()))))
                .toList();
        List<FinishEstimate.Work> toDrain = nodes.stream()
                .filter(n -> n.getPhase() == null || n.getPhase() == Phase.Pending || n.getPhase() == Phase.Cordoned || n.getPhase() == Phase.Draining)
                .map(n -> new FinishEstimate.Work(DRAIN, n.getPhase() == Phase.Draining ? Timestamps.parse(n.getStartedAt()) : null))
                .toList();
        ScaleDownStatus.RemovalStatus removal = status.getRemoval();
        FinishEstimate.Work removing = new FinishEstimate.Work(REMOVAL, removal == null ? null : Timestamps.parse(removal.getStartedAt()));
        return new FinishEstimate.Plan(List.of(new FinishEstimate.Stage(toDrain, 1), new FinishEstimate.Stage(List.of(removing), 1)), drained,
                Map.of(DRAIN, Duration.ofSeconds(priors.drainSeconds()), REMOVAL, Duration.ofSeconds(priors.removalSeconds())));
    }
}
