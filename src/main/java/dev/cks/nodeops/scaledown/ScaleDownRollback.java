package dev.cks.nodeops.scaledown;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;

/**
 * The one abort path of a ScaleDown before removal (as cluster-autoscaler has one): whatever fails -
 * a cordon, a drain, the deadline, a node uncordoned behind our back - every node this ScaleDown
 * cordoned is given back and nothing is removed.
 */
final class ScaleDownRollback {
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final ScaleDownPlanner planner;

    ScaleDownRollback(NodeWork work, OperationRecorder recorder, StatusStore store, ScaleDownPlanner planner) {
        this.work = work;
        this.recorder = recorder;
        this.store = store;
        this.planner = planner;
    }

    /** Refused before anything was cordoned: locks this ScaleDown may have taken are released; nothing else was touched. */
    Step refuse(ScaleDown resource, String message, Instant now) {
        List.copyOf(resource.getStatus().getTargetNodes()).forEach(node -> work.release(node, ScaleDownReconciler.owner(resource), false));
        recorder.refused(resource, OperationRecorder.REFUSED, message, now);
        return Step.finished();
    }

    /**
     * Puts back what this ScaleDown changed before removal: every node it cordoned (as the node's own
     * annotation says, so also one cordoned just before a restart) is uncordoned, its locks released,
     * nothing removed. The rollback is written first, so a restart half-way finishes it.
     */
    Step rollBack(ScaleDown resource, ScaleDownNodeStatus failed, String reason, String why, Instant now) {
        return rollBack(resource, reason, "Rolled back because of node " + failed.getName() + ": " + why, now);
    }

    /** {@link #rollBack(ScaleDown, ScaleDownNodeStatus, String, String, Instant)} for a cause that is no one node's. */
    Step rollBack(ScaleDown resource, String reason, String cause, Instant now) {
        ScaleDownStatus.RollbackStatus rollback = new ScaleDownStatus.RollbackStatus();
        rollback.setReason(reason);
        rollback.setCause(cause);
        resource.getStatus().setRollback(rollback);
        store.persist(resource);
        return finish(resource, now);
    }

    /** Gives back every target and ends RolledBack; also what a restart after {@link #rollBack} recorded the rollback runs. */
    Step finish(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = ScaleDownReconciler.owner(resource);
        List<String> uncordoned = new ArrayList<>();
        for (String name : List.copyOf(status.getTargetNodes())) {
            if (work.release(name, owner, true)) {
                uncordoned.add(name);
                recorder.uncordoned(resource, name, "as ScaleDown " + resource.getMetadata().getName() + " rolls back");
            }
            KillPoint.SCALEDOWN_ROLLBACK_RELEASED.reached();
        }
        // Uncordoned now, or (a restart half-way) by the rollback before: a node we cordoned that no longer says so.
        status.getNodes().stream().filter(n -> n.getPhase() != Phase.Failed)
                .filter(n -> uncordoned.contains(n.getName()) || Boolean.TRUE.equals(n.getCordonedByUs()) && !planner.isCordonedBy(n.getName(), owner))
                .forEach(n -> n.setPhase(Phase.Uncordoned));
        String message = status.getRollback().getCause() + "\nNothing was removed; "
                + (uncordoned.isEmpty() ? "no node needed uncordoning" : "uncordoned " + String.join(", ", uncordoned))
                + ". Fix what blocks, then create a new ScaleDown.";
        recorder.finished(resource, Stage.ROLLED_BACK, Conditions.ROLLED_BACK, status.getRollback().getReason(), message, now);
        return Step.finished();
    }
}
