package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.EscalationStep;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;

/**
 * One node's upgrade, one step per call, everything kept in its {@link UpgradeNodeStatus}: lock → cordon →
 * drain → executor Job ({@link UpgradeJobStep}) → Ready at the target → soak → uncordon (only if we
 * cordoned) → unlock; on failure the node is given back (docs/upgrade.md, "Per node"). Which node gets a
 * turn is the {@link RolloutGate}'s decision, not this class's.
 */
final class NodeUpgradePipeline {
    static final String NODE_SKIPPED = "NodeSkipped";
    static final String ADDONS_APPLIED = "AddonsApplied";
    static final String ADDON_APPLY_FAILED = "AddonApplyFailed";
    static final String ADDONS_UNKNOWN = "AddonsUnknown";
    static final String ADDONS_SKIPPED = "AddonsSkipped";
    /** How often a soaking node's drained workloads are looked at again. */
    static final Duration WORKLOADS_RECHECK = Duration.ofSeconds(5);

    private final OperatorSettings settings;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final UpgradeJobStep jobStep;

    NodeUpgradePipeline(OperatorSettings settings, NodeWork work, OperationRecorder recorder, StatusStore store, UpgradeJobStep jobStep) {
        this.settings = settings;
        this.work = work;
        this.recorder = recorder;
        this.store = store;
        this.jobStep = jobStep;
    }

    Step step(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        return switch (node.getPhase()) {
            case Pending -> start(upgrade, node, now);
            case Cordoned -> work.node(node.getName()).isEmpty() ? nodeDeleted(upgrade, node, now) : startDrain(upgrade, node, now);
            case Draining -> work.node(node.getName()).isEmpty() ? nodeDeleted(upgrade, node, now) : drain(upgrade, node, now);
            case Upgrading -> upgradeStep(upgrade, node, now);
            case WaitingReady -> awaitReady(upgrade, node, now);
            case Soaking -> soak(upgrade, node, now);
            case Failed -> fail(upgrade, node, node.getError(), now);
            case Succeeded, Skipped -> Step.next();
        };
    }

    /**
     * A node's turn: unless it was deleted, opted out or left the selector meanwhile, it is locked and cordoned. One that
     * is not upgraded after all first gets the ISO canary running on it off its VM (the canary then starts again on the
     * next node: {@link IsoCanaryHandover}).
     */
    private Step start(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<Node> current = work.node(node.getName());
        Optional<String> leftOut = current.flatMap(found -> UpgradePlan.leftOut(found, upgrade.getSpec().nodeSelection()));
        if (current.isPresent() && leftOut.isEmpty()) {
            return lockAndCordon(upgrade, node, now);
        }
        Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
        if (detaching.isPresent()) {
            return detaching.get();
        }
        if (current.isEmpty()) {
            return nodeDeleted(upgrade, node, now);
        }
        node.setAction(Action.Skip);
        node.setPhase(Phase.Skipped);
        node.setSkipReason(leftOut.get());
        recorder.event(upgrade, NODE_SKIPPED, "Node " + node.getName() + " is not upgraded: " + leftOut.get() + ".");
        return Step.next();
    }

    private Step lockAndCordon(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<UpgradeJobStep.Outcome> notYet = jobStep.beforeCordon(upgrade, node, now);
        if (notYet.isPresent()) {
            return outcomeOf(upgrade, node, notYet.get(), now);
        }
        String owner = owner(upgrade);
        NodeLock.Outcome lock = work.lock(node.getName(), owner);
        if (lock instanceof NodeLock.Reclaimed taken) {
            recorder.event(upgrade, "LockReclaimed", "Took over the lock of node " + node.getName() + " from " + NodeLock.display(taken.from())
                    + ", which no longer exists.");
        }
        if (lock instanceof NodeLock.HeldBy held) {
            recorder.waiting(upgrade, "NodeLocked", "Node " + node.getName() + " is locked by " + NodeLock.display(held.owner())
                    + "; this upgrade continues when that operation finishes and releases it.", now);
            return Step.onEvent();
        }
        if (lock instanceof NodeLock.NodeMissing) {
            return nodeDeleted(upgrade, node, now);
        }
        KillPoint.NODEUPGRADE_LOCKED.reached();
        NodeWork.Cordoning cordoning = work.cordon(node.getName(), owner);
        KillPoint.NODEUPGRADE_CORDONED.reached();
        if (cordoning instanceof NodeWork.NotCordoned failed) {
            return fail(upgrade, node, failed.reason(), now);
        }
        var record = ((NodeWork.Cordoned) cordoning).record();
        node.setCordonedByUs(record.cordonedByUs());
        node.setStartedAt(Timestamps.format(now));
        node.setPhase(Phase.Cordoned);
        recorder.nodeEvent(upgrade, node.getName(), OperationRecorder.CORDONED, record.cordonedByUs()
                ? "Cordoned node " + node.getName() + " to upgrade it to " + upgrade.getSpec().getTargetVersion() + "." : record.note());
        recorder.progressing(upgrade, "Cordoned", "Node " + node.getName() + " is cordoned; it is drained next.", now);
        return Step.next();
    }

    private Step startDrain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        node.setDrain(new DrainState());
        node.setPhase(Phase.Draining);
        node.setStepStartedAt(Timestamps.format(now));
        recorder.nodeEvent(upgrade, node.getName(), OperationRecorder.DRAINING, "Draining node " + node.getName() + ".");
        return drain(upgrade, node, now);
    }

    private Step drain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        DrainTick tick = work.drainTick(node, owner(upgrade), drainOptions(upgrade), upgrade.getStatus().deadlineAt(now), now);
        KillPoint.NODEUPGRADE_DRAIN_STEP.reached();
        recorder.drainTick(upgrade, node.getName(), tick, now);
        if (tick.giveUp().isPresent()) {
            return tick.giveUp().get() == EscalationStep.Action.SkipNode
                    ? skipNode(upgrade, node, "its drain was given up by " + (tick.outcome() == DrainResult.Outcome.BLOCKED
                            ? "spec.drain.escalation's SkipNode when the drain ran out of attempts: " : "") + tick.why(), now)
                    : fail(upgrade, node, "The drain of node " + node.getName() + " was given up: " + tick.why(), now);
        }
        return switch (tick.outcome()) {
            case IN_PROGRESS -> tick.next();
            case DONE -> {
                stepDone(node, "drain", now);
                node.setPhase(Phase.Upgrading);
                recorder.nodeDrained(upgrade, node);
                yield Step.next();
            }
            default -> fail(upgrade, node, "The drain of node " + node.getName() + " did not finish: " + tick.why(), now);
        };
    }

    /** The escalation ladder gave the node up with SkipNode: it is given back as it is, not upgraded, and the others go on. */
    private Step skipNode(NodeUpgrade upgrade, UpgradeNodeStatus node, String reason, Instant now) {
        boolean uncordoned = work.release(node.getName(), owner(upgrade), true);
        recorder.drainOver(upgrade, node.getName());
        node.setAction(Action.Skip);
        node.setPhase(Phase.Skipped);
        node.setSkipReason(BlockedByReport.tail(reason));
        node.setCompletedAt(Timestamps.format(now));
        recorder.nodeWarning(upgrade, node.getName(), NODE_SKIPPED, "Node " + node.getName() + " is not upgraded: " + reason
                + ". It is given back (uncordoned unless it was cordoned before) and the upgrade goes on with the other nodes.");
        if (uncordoned) {
            recorder.uncordoned(upgrade, node.getName(), "as its drain was given up");
        }
        return Step.next();
    }

    /**
     * The node's Node object was deleted after the plan (a person, the cluster-autoscaler, CloudStack scaling the
     * cluster in) before its upgrade ran: there is nothing left to upgrade or give back. It is reported and
     * skipped; the other nodes go on. A node whose Job runs is left to the Job's outcome.
     */
    private Step nodeDeleted(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        recorder.drainOver(upgrade, node.getName());
        node.setAction(Action.Skip);
        node.setPhase(Phase.Skipped);
        node.setSkipReason("its Node object was deleted after the upgrade was planned");
        node.setCompletedAt(Timestamps.format(now));
        recorder.warning(upgrade, NODE_SKIPPED, "Node " + node.getName() + " is not upgraded: its Node object was deleted after the upgrade was"
                + " planned (kubectl delete node, the cluster-autoscaler, or CloudStack removing its VM). The upgrade goes on with the other nodes.");
        return Step.next();
    }

    private Step upgradeStep(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        UpgradeJobStep.Outcome outcome = jobStep.advance(upgrade, node, now);
        if (!(outcome instanceof UpgradeJobStep.Upgraded)) {
            return outcomeOf(upgrade, node, outcome, now);
        }
        stepDone(node, "upgrade", now);
        ((UpgradeJobStep.Upgraded) outcome).addons().ifPresent(addons -> recordAddons(upgrade, node, addons, now));
        node.setPhase(Phase.WaitingReady);
        node.setReadyBy(Timestamps.format(now.plusSeconds(upgrade.getSpec().getReadyTimeoutSeconds())));
        recorder.nodeEvent(upgrade, node.getName(), "WaitingReady", "The upgrade Job of node " + node.getName()
                + " succeeded; waiting until it is Ready at " + upgrade.getSpec().getTargetVersion() + ".");
        return awaitReady(upgrade, node, now);
    }

    /**
     * The ISO's addons as the first control-plane node's script left them: in the node's status, the AddonsApplied
     * condition, and an event. A failed or unknown apply does not fail the node (IsoAddons says why).
     */
    private void recordAddons(NodeUpgrade upgrade, UpgradeNodeStatus node, IsoAddons.Report addons, Instant now) {
        node.setAddons(addons.summary());
        String message = IsoAddons.message(node.getName(), settings.namespace() + "/" + node.getJobName(), addons);
        Boolean applied = addons.known() ? addons.failed().isEmpty() : null;
        String reason = applied == null ? ADDONS_UNKNOWN : !applied ? ADDON_APPLY_FAILED : addons.skipped() ? ADDONS_SKIPPED : ADDONS_APPLIED;
        recorder.condition(upgrade, Conditions.ADDONS_APPLIED, applied, reason, message, now);
        if (Boolean.TRUE.equals(applied)) {
            recorder.nodeEvent(upgrade, node.getName(), reason, message);
        } else {
            recorder.nodeWarning(upgrade, node.getName(), reason, message);
        }
    }

    private Step outcomeOf(NodeUpgrade upgrade, UpgradeNodeStatus node, UpgradeJobStep.Outcome outcome, Instant now) {
        if (outcome instanceof UpgradeJobStep.Refused refused) {
            recorder.refused(upgrade, refused.reason(), refused.message(), now);
            return Step.finished();
        }
        return outcome instanceof UpgradeJobStep.NodeFailed failed ? fail(upgrade, node, failed.error(), now)
                : ((UpgradeJobStep.Continue) outcome).step();
    }

    private Step awaitReady(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        String target = upgrade.getSpec().getTargetVersion();
        UpgradeProgress.ReadyWait wait = UpgradeProgress.readyWait(work.node(node.getName()).orElse(null), node.getName(), target,
                Timestamps.parse(node.getReadyBy()), now);
        if (wait instanceof UpgradeProgress.ReadyTimedOut timedOut) {
            return fail(upgrade, node, timedOut.message(), now);
        }
        if (wait instanceof UpgradeProgress.KeepWaiting keepWaiting) {
            recorder.progressing(upgrade, "WaitingReady", "Waiting for node " + node.getName() + " to be Ready at " + target + ".", now);
            // The Node informer wakes us on every change; the reschedule only catches the timeout.
            return keepWaiting.until() == null ? Step.onEvent() : Step.at(keepWaiting.until(), now);
        }
        stepDone(node, "ready", now);
        node.setVersion(((UpgradeProgress.ReadyAtTarget) wait).version());
        boolean uncordoned = work.release(node.getName(), owner(upgrade), true);
        KillPoint.NODEUPGRADE_RELEASED.reached();
        node.setError(null);
        Instant started = Timestamps.parse(node.getStartedAt());
        if (started != null) {
            recorder.nodeStep("node", Duration.between(started, now));
        }
        recorder.nodeEvent(upgrade, node.getName(), "NodeUpgraded", "Node " + node.getName() + " is Ready at " + node.getVersion() + " (was "
                + node.getFromVersion() + ")" + (uncordoned ? " and uncordoned." : "; it was cordoned before, so it stays cordoned."));
        if (uncordoned) {
            recorder.uncordoned(upgrade, node.getName(), "now that it is upgraded");
        }
        NodeUpgradeSpec spec = upgrade.getSpec();
        if (spec.getSoakSeconds() > 0 || Boolean.TRUE.equals(spec.getWaitForDrainedWorkloads())) {
            node.setPhase(Phase.Soaking);
            node.setSoakUntil(Timestamps.format(Timestamps.roundUp(now.plusSeconds(spec.getSoakSeconds()))));
            return soak(upgrade, node, now);
        }
        return succeeded(upgrade, node, now);
    }

    /** After a node is upgraded: soakSeconds, then (if asked) its drained workloads Ready again, before the node it makes room for starts. */
    private Step soak(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Instant until = Timestamps.parse(node.getSoakUntil());
        if (until != null && now.isBefore(until)) {
            recorder.progressing(upgrade, "Soaking", "Node " + node.getName() + " is upgraded; it soaks until " + node.getSoakUntil()
                    + " (spec.soakSeconds) before the next node starts.", now);
            return Step.at(until, now);
        }
        if (Boolean.TRUE.equals(upgrade.getSpec().getWaitForDrainedWorkloads()) && node.getDrain() != null) {
            List<String> notReady = work.workloadsNotReady(node.getDrain().getWorkloads());
            if (!notReady.isEmpty()) {
                recorder.progressing(upgrade, "Soaking", "Node " + node.getName() + " is upgraded; waiting for the workloads its drain evicted to be "
                        + "Ready again (spec.waitForDrainedWorkloads): " + String.join(", ", notReady) + ".", now);
                return Step.after(WORKLOADS_RECHECK);
            }
        }
        return succeeded(upgrade, node, now);
    }

    private Step succeeded(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        node.setPhase(Phase.Succeeded);
        node.setCompletedAt(Timestamps.format(now));
        upgrade.getStatus().setProgress(UpgradeProgress.progress(upgrade.getStatus().getNodes()));
        return Step.next();
    }

    /**
     * The deadline passed before the node's upgrade started: it fails and is given back, unless its Job
     * exists after all (created, then the operator stopped before recording it): then kubeadm may run, and
     * the node goes on like any node whose upgrade runs.
     */
    Step giveUp(NodeUpgrade upgrade, UpgradeNodeStatus node, String error, Instant now) {
        if (node.getPhase() == Phase.Upgrading && jobStep.jobExists(upgrade, node)) {
            return step(upgrade, node, now);
        }
        return fail(upgrade, node, error, now);
    }

    /**
     * The node failed: the ISO is detached first (polled), then the node is given back (uncordoned unless
     * it was cordoned before; completedAt marks it given back). No further node starts; the upgrade fails
     * once the nodes still in progress are done. Re-entered until the ISO is gone.
     */
    Step fail(NodeUpgrade upgrade, UpgradeNodeStatus node, String error, Instant now) {
        node.setPhase(Phase.Failed);
        node.setError(BlockedByReport.tail(error));
        Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
        if (detaching.isPresent()) {
            return detaching.get();
        }
        // Failed is written before the node is given back: a restart in between fails it again, never drains or upgrades it uncordoned.
        store.persist(upgrade);
        boolean uncordoned = work.release(node.getName(), owner(upgrade), true);
        KillPoint.NODEUPGRADE_FAILED_RELEASED.reached();
        recorder.drainOver(upgrade, node.getName());
        node.setCompletedAt(Timestamps.format(now));
        List<String> others = upgrade.getStatus().getNodes().stream().filter(UpgradeRollout::inProgress).map(UpgradeNodeStatus::getName).toList();
        recorder.nodeWarning(upgrade, node.getName(), "NodeFailed", "Node " + node.getName() + " failed: " + error + " No further node starts"
                + (others.isEmpty() ? "." : "; " + String.join(", ", others) + " in progress finish first."));
        if (uncordoned) {
            recorder.uncordoned(upgrade, node.getName(), "as its upgrade failed");
        }
        return Step.next();
    }

    private void stepDone(UpgradeNodeStatus node, String step, Instant now) {
        Instant started = Timestamps.parse(node.getStepStartedAt());
        if (started != null) {
            recorder.nodeStep(step, Duration.between(started, now));
        }
        node.setStepStartedAt(Timestamps.format(now));
    }

    /**
     * The NodeUpgrade is deleted while this node is not settled: it must not be stranded. A node whose upgrade
     * runs is only released: its Job is orphaned first (the garbage collector would otherwise kill kubeadm
     * half-way), and uncordoning it while kubeadm works on it would let pods land on a node about to restart
     * its kubelet. Any other is uncordoned (if we cordoned it) and unlocked once its ISO is detached.
     *
     * @return the step to come back at while its ISO is being detached
     */
    Optional<Step> releaseOnDelete(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        if (node.getPhase() == Phase.Upgrading || node.getPhase() == Phase.WaitingReady) {
            Optional<String> orphaned = jobStep.orphanRunningJob(upgrade, node);
            orphaned.ifPresent(job -> KillPoint.NODEUPGRADE_JOB_ORPHANED.reached());
            if (node.getIsoState() != null && node.getIsoState() != UpgradeNodeStatus.IsoState.Detached) {
                // The ISO comes off only once kubeadm no longer reads it: the finalizer stays until the Job has ended.
                if (orphaned.isPresent()) {
                    recorder.event(upgrade, "IsoDetachAfterJob", "NodeUpgrade " + upgrade.getMetadata().getName() + " was deleted while upgrade Job "
                            + orphaned.get() + " runs on node " + node.getName() + "; ISO " + node.getIsoId() + " is detached from VM " + node.getVmId()
                            + " once the Job has ended, then the NodeUpgrade goes.");
                    return Optional.of(Step.after(UpgradeJobStep.POD_RECHECK));
                }
                Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
                if (detaching.isPresent()) {
                    return detaching;
                }
            }
            recorder.nodeWarning(upgrade, node.getName(), "LeftCordoned", "NodeUpgrade " + upgrade.getMetadata().getName() + " was deleted while node "
                    + node.getName() + " was being upgraded; the node is released but stays cordoned"
                    + orphaned.map(job -> ", and its upgrade Job " + job + " runs to its end").orElse("")
                    + ". Uncordon it (kubectl uncordon " + node.getName() + ") once it is healthy.");
            work.release(node.getName(), owner(upgrade), false);
            KillPoint.NODEUPGRADE_DELETED_RELEASED.reached();
            return Optional.empty();
        }
        Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
        if (detaching.isPresent()) {
            return detaching;
        }
        if (work.release(node.getName(), owner(upgrade), true)) {
            recorder.uncordoned(upgrade, node.getName(), "because NodeUpgrade " + upgrade.getMetadata().getName() + " was deleted");
        }
        KillPoint.NODEUPGRADE_DELETED_RELEASED.reached();
        return Optional.empty();
    }

    DrainOptions drainOptions(NodeUpgrade upgrade) {
        return DrainOptions.effective(upgrade.getSpec().getDrain(), settings.drain());
    }

    private static String owner(NodeUpgrade upgrade) {
        return NodeUpgradeReconciler.owner(upgrade);
    }
}
