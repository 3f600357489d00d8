package dev.cks.nodeops.scaledown;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Optional;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.EscalationStep;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;

/**
 * The node work of a ScaleDown before removal: every node is cordoned first (so pods evicted from one
 * are not rescheduled onto another that is going away too), then the nodes are drained one at a time.
 * A failure goes to the one abort path, {@link ScaleDownRollback}.
 */
final class ScaleDownDrains {
    private final OperatorSettings settings;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final ScaleDownPlanner planner;
    private final ScaleDownRollback rollback;
    private final Duration recheckCloudStack;

    ScaleDownDrains(OperatorSettings settings, NodeWork work, OperationRecorder recorder, ScaleDownPlanner planner, ScaleDownRollback rollback,
            Duration recheckCloudStack) {
        this.settings = settings;
        this.work = work;
        this.recorder = recorder;
        this.planner = planner;
        this.rollback = rollback;
        this.recheckCloudStack = recheckCloudStack;
    }

    Step cordonAll(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        for (ScaleDownNodeStatus node : status.getNodes()) {
            if (node.getPhase() != Phase.Pending) {
                continue;
            }
            if (node.getDownReason() != null) {
                node.setPhase(Phase.SkippedDown);
                recorder.event(resource, "SkippedDown", "Node " + node.getName() + " is down (" + node.getDownReason()
                        + "): it is neither cordoned nor drained, and will be removed with the others.");
                continue;
            }
            NodeWork.Cordoning cordoning = work.cordon(node.getName(), ScaleDownReconciler.owner(resource));
            KillPoint.SCALEDOWN_CORDONED.reached();
            if (cordoning instanceof NodeWork.NotCordoned failed) {
                return rollback.rollBack(resource, node, "CordonFailed", failed.reason(), now);
            }
            var record = ((NodeWork.Cordoned) cordoning).record();
            node.setCordonedByUs(record.cordonedByUs());
            node.setCordonedAt(Timestamps.format(now));
            node.setPhase(Phase.Cordoned);
            recorder.nodeEvent(resource, node.getName(), OperationRecorder.CORDONED, record.cordonedByUs()
                    ? "Cordoned node " + node.getName() + " to remove it from the cluster." : record.note());
        }
        status.setPhase(ScaleDownStatus.Phase.Draining);
        recorder.progressing(resource, "Draining", "Every node is cordoned; draining them one by one.", now);
        return Step.next();
    }

    /** One step of the drain of the next node: started when CloudStack is not changing the cluster itself, then one tick. */
    Step drain(ScaleDown resource, ScaleDownNodeStatus node, Instant deadline, Instant now) {
        if (node.getPhase() == Phase.Cordoned) {
            // Don't fight CloudStack: before each node, make sure it is not changing the cluster itself.
            Optional<ScaleDownPlanner.Wait> wait = planner.cloudStackBusy(resource.getStatus().getClusterId());
            if (wait.isPresent()) {
                recorder.waiting(resource, wait.get().reason(), wait.get().message(), now);
                return Step.after(recheckCloudStack);
            }
            node.setPhase(Phase.Draining);
            node.setStartedAt(Timestamps.format(now));
            node.setDrain(new DrainState());
            recorder.nodeEvent(resource, node.getName(), OperationRecorder.DRAINING, "Draining node " + node.getName() + ".");
        }
        resource.getStatus().setCurrentNode(node.getName());
        DrainTick tick = work.drainTick(node, ScaleDownReconciler.owner(resource), drainOptions(resource), deadline, now);
        KillPoint.SCALEDOWN_DRAIN_STEP.reached();
        recorder.drainTick(resource, node.getName(), tick, now);
        return afterTick(resource, node, tick, now);
    }

    private Step afterTick(ScaleDown resource, ScaleDownNodeStatus node, DrainTick tick, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        if (tick.giveUp().isPresent()) {
            return tick.giveUp().get() == EscalationStep.Action.SkipNode ? keep(resource, node, tick.why(), now)
                    : rollback.rollBack(resource, node, "DrainGivenUp", "The drain of node " + node.getName() + " was given up: " + tick.why(), now);
        }
        switch (tick.outcome()) {
            case DONE -> {
                node.setPhase(Phase.Drained);
                node.setCompletedAt(Timestamps.format(now));
                recorder.nodeStep("drain", Duration.between(Timestamps.parse(node.getStartedAt()), now));
                status.setProgress(ScaleDownSteps.progress(status.getNodes()));
                recorder.nodeDrained(resource, node);
                return Step.next();
            }
            case IN_PROGRESS -> {
                return tick.next();
            }
            default -> {
                node.setPhase(Phase.Failed);
                node.setError(BlockedByReport.tail(tick.why()));
                return rollback.rollBack(resource, node, "DrainBlocked", "Node " + node.getName() + " could not be drained:\n" + tick.why(), now);
            }
        }
    }

    /**
     * The escalation ladder gave the node up with SkipNode: it is given back (uncordoned unless cordoned
     * before, unlocked) and kept in the cluster; it moves to status.keptNodes and the others go on. With
     * no node left to remove, the ScaleDown ends RolledBack: it removed nothing.
     */
    private Step keep(ScaleDown resource, ScaleDownNodeStatus node, String why, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        boolean uncordoned = work.release(node.getName(), ScaleDownReconciler.owner(resource), true);
        recorder.drainOver(resource, node.getName());
        node.setPhase(Phase.Kept);
        node.setError(BlockedByReport.tail(why));
        node.setCompletedAt(Timestamps.format(now));
        status.getNodes().remove(node);
        status.getKeptNodes().add(node);
        status.setTargetNodes(new ArrayList<>(status.getNodes().stream().map(ScaleDownNodeStatus::getName).toList()));
        status.setProgress(ScaleDownSteps.progress(status.getNodes()));
        recorder.nodeWarning(resource, node.getName(), "NodeKept", "Node " + node.getName() + " is kept, not removed: its drain was given up by "
                + why + ". It is given back and the other nodes go on.");
        if (uncordoned) {
            recorder.uncordoned(resource, node.getName(), "as it is kept");
        }
        if (status.getNodes().isEmpty()) {
            recorder.finished(resource, Stage.ROLLED_BACK, Conditions.ROLLED_BACK, "AllNodesKept", "No node was removed: the drain of every node "
                    + "was given up by spec.drain.escalation (SkipNode), and each was given back.", now);
            return Step.finished();
        }
        return Step.next();
    }

    DrainOptions drainOptions(ScaleDown resource) {
        return DrainOptions.effective(resource.getSpec().getDrain(), settings.drain());
    }
}
