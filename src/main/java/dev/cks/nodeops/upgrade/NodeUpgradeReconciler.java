package dev.cks.nodeops.upgrade;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;

/**
 * Upgrades the selected nodes one at a time, as a resumable state machine: every reconcile advances
 * the current node by one step and stores everything in status, then asks to be called again (a
 * reschedule, or a Node / Job event). Per node: lock → cordon → drain → executor Job
 * ({@link UpgradeJobStep}) → Ready at the target → uncordon (only if we cordoned) → unlock
 * (docs/upgrade.md).
 */
@ControllerConfiguration(name = "nodeupgrade", generationAwareEventProcessing = false,
        informer = @Informer(onUpdateFilter = RetryOrSpecChanged.class))
// The API server may be gone for minutes while a control-plane node is upgraded: never give up retrying.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
public class NodeUpgradeReconciler implements Reconciler<NodeUpgrade>, Cleaner<NodeUpgrade> {
    static final String KIND = "NodeUpgrade";

    private final Clock clock;
    private final OperatorSettings settings;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final UpgradeJobStep jobStep;

    @Inject
    public NodeUpgradeReconciler(KubernetesClient client, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings) {
        this(clock, settings, cloudStack, OperationPorts.onCluster(client, KIND, events, metrics), UpgradeJobs.on(client));
    }

    NodeUpgradeReconciler(Clock clock, OperatorSettings settings, CloudStackAccess cloudStack, OperationPorts ports, UpgradeJobs jobs) {
        this.clock = clock;
        this.settings = settings;
        this.work = ports.work();
        this.recorder = ports.recorder();
        this.jobStep = new UpgradeJobStep(jobs, new CloudStackIsoExecutor(cloudStack), recorder, ports.store(), settings);
    }

    @Override
    public List<EventSource<?, NodeUpgrade>> prepareEventSources(EventSourceContext<NodeUpgrade> context) {
        return UpgradeEventSources.prepare(context, settings);
    }

    @Override
    public UpdateControl<NodeUpgrade> reconcile(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        NodeUpgradeStatus status = upgrade.getStatus() == null ? new NodeUpgradeStatus() : upgrade.getStatus();
        upgrade.setStatus(status);
        Instant now = clock.instant();
        Optional<String> retry = UpgradeProgress.takeRetry(upgrade);
        retry.ifPresent(token -> recorder.event(upgrade, "RetryRequested", "Retrying NodeUpgrade " + upgrade.getMetadata().getName()
                + " (retry " + token + "): nodes Ready at " + upgrade.getSpec().getTargetVersion() + " are skipped."));
        if (status.finished()) {
            return UpdateControl.noUpdate();
        }
        return recorder.step(upgrade, NodeUpgradeValidation.problems(upgrade.getSpec()), now,
                () -> status.getStartedAt() == null ? plan(upgrade, now) : advance(upgrade, now));
    }

    /** An exception from a step (the API server restarting under a control-plane upgrade, a bug): the error goes to status, the step is retried. */
    @Override
    public ErrorStatusUpdateControl<NodeUpgrade> updateErrorStatus(NodeUpgrade upgrade, Context<NodeUpgrade> context, Exception e) {
        return recorder.retrying(upgrade, e, clock.instant());
    }

    private Step plan(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        NodeUpgradeSpec spec = upgrade.getSpec();
        List<UpgradeNodeStatus> planned = UpgradePlan.plan(work.nodes(), spec.getNodeSelector(), spec.getTargetVersion());
        status.setNodes(new ArrayList<>(planned));
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
        status.setProgress(UpgradeProgress.progress(planned));
        if (planned.isEmpty()) {
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, "NothingToUpgrade", "No node matches spec.nodeSelector; nothing to upgrade.", now);
            return Step.finished();
        }
        List<String> toUpgrade = planned.stream().filter(n -> n.getAction() != Action.Skip).map(UpgradeNodeStatus::getName).toList();
        PreflightGate.Verdict verdict = PreflightGate.check(work, toUpgrade, drainOptions(upgrade), spec.getPreflight(), now);
        if (verdict instanceof PreflightGate.Refuse refuse) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, refuse.message(), now);
            return Step.finished();
        }
        recorder.preflight(upgrade, (PreflightGate.Proceed) verdict, now);
        String order = planned.stream().map(n -> n.getName() + " (" + n.getAction() + ")").collect(Collectors.joining(", "));
        recorder.accepted(upgrade, "Planned", "NodeUpgrade " + upgrade.getMetadata().getName() + " to " + spec.getTargetVersion() + ": " + order + ".", now);
        status.setPhase(NodeUpgradeStatus.Phase.Running);
        recorder.progressing(upgrade, "Planned", "Upgrading " + toUpgrade.size() + " of " + planned.size() + " selected nodes to "
                + spec.getTargetVersion() + ".", now);
        return Step.next();
    }

    /** One step of the current node. */
    private Step advance(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        Optional<UpgradeNodeStatus> current = UpgradeProgress.current(status.getNodes());
        status.setProgress(UpgradeProgress.progress(status.getNodes()));
        if (current.isEmpty()) {
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, "AllNodesUpgraded", "All " + status.getNodes().size()
                    + " selected nodes are at " + upgrade.getSpec().getTargetVersion() + " and Ready.", now);
            return Step.finished();
        }
        UpgradeNodeStatus node = current.get();
        status.setCurrentNode(node.getName());
        if (node.getPhase() == Phase.Failed) {
            return failNode(upgrade, node, node.getError(), now);
        }
        if (UpgradeProgress.passed(status.getDeadline(), now)) {
            return failNode(upgrade, node, "The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline() + ") passed while node "
                    + node.getName() + " was " + node.getPhase() + ".", now);
        }
        return switch (node.getPhase()) {
            case Pending -> lockAndCordon(upgrade, node, now);
            case Cordoned -> startDrain(upgrade, node, now);
            case Draining -> drain(upgrade, node, now);
            case Upgrading -> upgradeStep(upgrade, node, now);
            case WaitingReady -> awaitReady(upgrade, node, now);
            case Succeeded, Skipped, Failed -> Step.next();
        };
    }

    private Step lockAndCordon(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<UpgradeJobStep.Outcome> notYet = jobStep.beforeCordon(upgrade, node, now);
        if (notYet.isPresent()) {
            return outcomeOf(upgrade, node, notYet.get(), now);
        }
        String owner = owner(upgrade);
        NodeLock.Outcome lock = work.lock(node.getName(), owner);
        if (lock instanceof NodeLock.HeldBy held) {
            recorder.waiting(upgrade, "NodeLocked", "Node " + node.getName() + " is locked by " + held.owner()
                    + "; this upgrade continues when that operation finishes and releases it.", now);
            return Step.onEvent();
        }
        if (lock instanceof NodeLock.NodeMissing) {
            return failNode(upgrade, node, "Node " + node.getName() + " no longer exists; re-create the NodeUpgrade to plan again.", now);
        }
        NodeWork.Cordoning cordoning = work.cordon(node.getName(), owner);
        if (cordoning instanceof NodeWork.NotCordoned failed) {
            return failNode(upgrade, node, failed.reason(), now);
        }
        var record = ((NodeWork.Cordoned) cordoning).record();
        node.setCordonedByUs(record.cordonedByUs());
        node.setStartedAt(Timestamps.format(now));
        node.setPhase(Phase.Cordoned);
        recorder.event(upgrade, OperationRecorder.CORDONED, record.cordonedByUs() ? "Cordoned node " + node.getName() + "." : record.note());
        recorder.progressing(upgrade, "Cordoned", "Node " + node.getName() + " is cordoned; it is drained next.", now);
        return Step.next();
    }

    private Step startDrain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        node.setDrain(new DrainState());
        node.setPhase(Phase.Draining);
        node.setStepStartedAt(Timestamps.format(now));
        recorder.event(upgrade, OperationRecorder.DRAINING, "Draining node " + node.getName() + ".");
        return drain(upgrade, node, now);
    }

    private Step drain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        DrainTick tick = work.drainTick(node, drainOptions(upgrade), Timestamps.parse(upgrade.getStatus().getDeadline()), now);
        recorder.drainTick(upgrade, node.getName(), tick, now);
        return switch (tick.outcome()) {
            case IN_PROGRESS -> tick.next();
            case DONE -> {
                stepDone(node, "drain", now);
                node.setPhase(Phase.Upgrading);
                recorder.event(upgrade, OperationRecorder.NODE_DRAINED, "Drained node " + node.getName() + ".");
                yield Step.next();
            }
            default -> failNode(upgrade, node, "The drain of node " + node.getName() + " did not finish: " + tick.report(), now);
        };
    }

    private Step upgradeStep(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        UpgradeJobStep.Outcome outcome = jobStep.advance(upgrade, node, now);
        if (!(outcome instanceof UpgradeJobStep.Upgraded)) {
            return outcomeOf(upgrade, node, outcome, now);
        }
        stepDone(node, "upgrade", now);
        node.setPhase(Phase.WaitingReady);
        node.setReadyBy(Timestamps.format(now.plusSeconds(upgrade.getSpec().getReadyTimeoutSeconds())));
        recorder.event(upgrade, "WaitingReady", "The upgrade Job of node " + node.getName() + " succeeded; waiting until it is Ready at "
                + upgrade.getSpec().getTargetVersion() + ".");
        return awaitReady(upgrade, node, now);
    }

    private Step outcomeOf(NodeUpgrade upgrade, UpgradeNodeStatus node, UpgradeJobStep.Outcome outcome, Instant now) {
        return outcome instanceof UpgradeJobStep.NodeFailed failed ? failNode(upgrade, node, failed.error(), now)
                : ((UpgradeJobStep.Continue) outcome).step();
    }

    private Step awaitReady(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        String target = upgrade.getSpec().getTargetVersion();
        UpgradeProgress.ReadyWait wait = UpgradeProgress.readyWait(work.node(node.getName()).orElse(null), node.getName(), target,
                Timestamps.parse(node.getReadyBy()), now);
        if (wait instanceof UpgradeProgress.ReadyTimedOut timedOut) {
            return failNode(upgrade, node, timedOut.message(), now);
        }
        if (wait instanceof UpgradeProgress.KeepWaiting keepWaiting) {
            recorder.progressing(upgrade, "WaitingReady", "Waiting for node " + node.getName() + " to be Ready at " + target + ".", now);
            // The Node informer wakes us on every change; the reschedule only catches the timeout.
            return keepWaiting.until() == null ? Step.onEvent() : Step.at(keepWaiting.until(), now);
        }
        stepDone(node, "ready", now);
        node.setVersion(((UpgradeProgress.ReadyAtTarget) wait).version());
        boolean uncordoned = work.release(node.getName(), owner(upgrade), true);
        node.setPhase(Phase.Succeeded);
        node.setCompletedAt(Timestamps.format(now));
        node.setError(null);
        Instant started = Timestamps.parse(node.getStartedAt());
        if (started != null) {
            recorder.nodeStep("node", Duration.between(started, now));
        }
        upgrade.getStatus().setProgress(UpgradeProgress.progress(upgrade.getStatus().getNodes()));
        recorder.event(upgrade, "NodeUpgraded", "Node " + node.getName() + " is Ready at " + node.getVersion() + " (was " + node.getFromVersion() + ")"
                + (uncordoned ? " and uncordoned." : "; it was cordoned before, so it stays cordoned."));
        return Step.next();
    }

    /**
     * The node failed: the ISO is detached first (polled), then the node is given back (uncordoned
     * unless it was cordoned before) and the upgrade stops. Re-entered until the ISO is gone.
     */
    private Step failNode(NodeUpgrade upgrade, UpgradeNodeStatus node, String error, Instant now) {
        node.setPhase(Phase.Failed);
        node.setError(BlockedByReport.tail(error));
        node.setCompletedAt(Timestamps.format(now));
        Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
        if (detaching.isPresent()) {
            return detaching.get();
        }
        work.release(node.getName(), owner(upgrade), true);
        String name = upgrade.getMetadata().getName();
        String message = "NodeUpgrade " + name + " failed at node " + node.getName() + ": " + error
                + (error.contains("retry") ? "" : " Retry with: kubectl annotate nu " + name + " " + NodeAnnotations.RETRY + "=$(date +%s) --overwrite");
        recorder.finished(upgrade, Stage.FAILED, Conditions.FAILED, "NodeFailed", message, now);
        return Step.finished();
    }

    private void stepDone(UpgradeNodeStatus node, String step, Instant now) {
        Instant started = Timestamps.parse(node.getStepStartedAt());
        if (started != null) {
            recorder.nodeStep(step, Duration.between(started, now));
        }
        node.setStepStartedAt(Timestamps.format(now));
    }

    /**
     * Deleting a NodeUpgrade mid-operation must not strand nodes: what we cordoned is uncordoned and our
     * locks released. A node whose upgrade is running is only released: uncordoning it while kubeadm
     * works on it would let pods land on a node about to restart its kubelet.
     */
    @Override
    public DeleteControl cleanup(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        List<UpgradeNodeStatus> planned = upgrade.getStatus() == null ? List.of() : upgrade.getStatus().getNodes();
        Instant now = clock.instant();
        for (UpgradeNodeStatus node : planned) {
            if (node.getPhase() == Phase.Succeeded || node.getPhase() == Phase.Skipped) {
                continue;
            }
            if (node.getPhase() == Phase.Upgrading || node.getPhase() == Phase.WaitingReady) {
                recorder.warning(upgrade, "LeftCordoned", "NodeUpgrade " + upgrade.getMetadata().getName() + " was deleted while node "
                        + node.getName() + " was being upgraded; the node is released but stays cordoned. Uncordon it (kubectl uncordon "
                        + node.getName() + ") once it is healthy.");
                work.release(node.getName(), owner(upgrade), false);
                continue;
            }
            Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
            if (detaching.isPresent()) {
                return DeleteControl.noFinalizerRemoval().rescheduleAfter(detaching.get().after());
            }
            if (work.release(node.getName(), owner(upgrade), true)) {
                recorder.event(upgrade, OperationRecorder.UNCORDONED, "Uncordoned node " + node.getName() + " because NodeUpgrade "
                        + upgrade.getMetadata().getName() + " was deleted.");
            }
        }
        return DeleteControl.defaultDelete();
    }

    private DrainOptions drainOptions(NodeUpgrade upgrade) {
        return DrainOptions.effective(upgrade.getSpec().getDrain(), settings.drain());
    }

    static String owner(NodeUpgrade upgrade) {
        return NodeLock.owner(KIND, upgrade.getMetadata().getName());
    }
}
