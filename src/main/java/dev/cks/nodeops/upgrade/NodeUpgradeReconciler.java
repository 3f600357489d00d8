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
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.EscalationStep;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.DrainWakeups;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;
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
    static final String NODE_SKIPPED = "NodeSkipped";
    /** How often a soaking node's drained workloads are looked at again. */
    static final Duration WORKLOADS_RECHECK = Duration.ofSeconds(5);

    private final Clock clock;
    private final OperatorSettings settings;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final UpgradeJobStep jobStep;
    private final ApiServerVersions apiServers;

    @Inject
    public NodeUpgradeReconciler(KubernetesClient client, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings) {
        this(clock, settings, cloudStack, OperationPorts.onCluster(client, KIND, events, metrics), UpgradeJobs.on(client),
                ApiServerVersions.on(client));
    }

    NodeUpgradeReconciler(Clock clock, OperatorSettings settings, CloudStackAccess cloudStack, OperationPorts ports, UpgradeJobs jobs,
            ApiServerVersions apiServers) {
        this.clock = clock;
        this.apiServers = apiServers;
        this.settings = settings;
        this.work = ports.work();
        this.recorder = ports.recorder();
        this.store = ports.store();
        this.jobStep = new UpgradeJobStep(jobs, new CloudStackIsoExecutor(cloudStack), recorder, store, settings);
    }

    @Override
    public List<EventSource<?, NodeUpgrade>> prepareEventSources(EventSourceContext<NodeUpgrade> context) {
        List<EventSource<?, NodeUpgrade>> sources = new ArrayList<>(UpgradeEventSources.prepare(context, settings));
        sources.add(new DrainWakeups<>(work));
        return sources;
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
        List<Node> cluster = work.nodes();
        List<UpgradeNodeStatus> planned = UpgradePlan.plan(cluster, spec.getNodeSelector(), spec.getTargetVersion());
        status.setNodes(new ArrayList<>(planned));
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
        status.setProgress(UpgradeProgress.progress(planned));
        if (planned.isEmpty()) {
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, "NothingToUpgrade", "No node matches spec.nodeSelector; nothing to upgrade.", now);
            return Step.finished();
        }
        Optional<String> skew = VersionSkew.refusal(planned, cluster, apiServers.read(), spec.getTargetVersion());
        if (skew.isPresent()) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, skew.get(), now);
            return Step.finished();
        }
        List<String> toUpgrade = planned.stream().filter(n -> n.getAction() != Action.Skip).map(UpgradeNodeStatus::getName).toList();
        PreflightGate.Verdict verdict = PreflightGate.check(work, toUpgrade, Draining.ONE_AT_A_TIME, drainOptions(upgrade), spec.getPreflight(), now);
        if (verdict instanceof PreflightGate.Refuse refuse) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, refuse.message(), now);
            return Step.finished();
        }
        recorder.preflight(upgrade, (PreflightGate.Proceed) verdict, now);
        String order = planned.stream().map(n -> n.getName() + " (" + n.getAction() + (n.getAction() == Action.Skip ? ": " + n.getSkipReason() : "") + ")")
                .collect(Collectors.joining(", "));
        recorder.accepted(upgrade, "Planned", "NodeUpgrade " + upgrade.getMetadata().getName() + " to " + spec.getTargetVersion() + ": " + order + ".", now);
        planned.stream().filter(n -> n.getAction() == Action.Skip && n.getVersion() == null)
                .forEach(n -> recorder.event(upgrade, NODE_SKIPPED, "Node " + n.getName() + " is not upgraded: " + n.getSkipReason() + "."));
        status.setPhase(NodeUpgradeStatus.Phase.Running);
        recorder.progressing(upgrade, "Planned", "Upgrading " + toUpgrade.size() + " of " + planned.size() + " selected nodes to "
                + spec.getTargetVersion() + ".", now);
        return Step.next();
    }

    /**
     * One step of every node in progress, and the start of those that may start now (control-plane nodes
     * one at a time, then workers up to maxUnavailable, inside the window and not paused).
     */
    private Step advance(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        NodeUpgradeSpec spec = upgrade.getSpec();
        WorkGate.Verdict newWork = WorkGate.check(spec.getPaused(), spec.getWindow(), WorkGate.Work.NEW, now);
        WorkGate.Verdict goOn = WorkGate.check(spec.getPaused(), spec.getWindow(), WorkGate.Work.IN_PROGRESS, now);
        recorder.window(upgrade, newWork);
        if (goOn instanceof WorkGate.Go && (newWork instanceof WorkGate.Go || status.getNodes().stream().anyMatch(UpgradeRollout::inProgress))) {
            // Not held (any more): the time held moves the deadline before it is looked at.
            recorder.resumed(upgrade, drains(status), now);
        }
        Instant deadline = status.deadlineAt(now);
        boolean overdue = deadline != null && !now.isBefore(deadline);
        boolean anyFailed = status.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Failed);
        UpgradeRollout.Selection selection = UpgradeRollout.select(status.getNodes(), work.nodes(), spec.getMaxUnavailable(), owner(upgrade),
                newWork instanceof WorkGate.Go && !anyFailed && !overdue);
        List<Step> steps = new ArrayList<>();
        for (UpgradeNodeStatus node : selection.inProgress()) {
            // No new work past the deadline; a node whose upgrade runs (or that is restarting) finishes first,
            // bounded by its Job's activeDeadlineSeconds and readyTimeoutSeconds: it is never given back under kubeadm.
            if (overdue && node.getPhase() != Phase.Failed && !UpgradeProgress.isUnderway(node)) {
                steps.add(failNode(upgrade, node, "The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline() + ") passed while node "
                        + node.getName() + " was " + node.getPhase() + ".", now));
            } else if (!(goOn instanceof WorkGate.Hold && atSafeBoundary(node))) {
                steps.add(stepNode(upgrade, node, now));
            }
        }
        for (UpgradeNodeStatus node : selection.toStart()) {
            steps.add(stepNode(upgrade, node, now));
        }
        status.setProgress(UpgradeProgress.progress(status.getNodes()));
        List<String> busy = status.getNodes().stream().filter(UpgradeRollout::inProgress).map(UpgradeNodeStatus::getName).toList();
        status.setCurrentNode(busy.isEmpty() ? null : String.join(",", busy));
        if (steps.isEmpty()) {
            WorkGate.Verdict hold = selection.inProgress().isEmpty() ? newWork : goOn;
            return idle(upgrade, selection, hold instanceof WorkGate.Hold held ? held : null, overdue, now);
        }
        if (Boolean.TRUE.equals(spec.getPaused())) {
            recorder.pausing(upgrade, "spec.paused is true: the upgrade stops once " + String.join(", ", busy)
                    + " reach a safe boundary (a node's upgrade Job and its wait for Ready are not interrupted).", now);
        }
        return Step.soonest(steps);
    }

    /** No node was worked on in this reconcile: the upgrade is over, held, or waits for room under maxUnavailable. */
    private Step idle(NodeUpgrade upgrade, UpgradeRollout.Selection selection, WorkGate.Hold hold, boolean overdue, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        List<UpgradeNodeStatus> failed = status.getNodes().stream().filter(n -> n.getPhase() == Phase.Failed).toList();
        Optional<UpgradeNodeStatus> pending = status.getNodes().stream().filter(n -> n.getPhase() == Phase.Pending).findFirst();
        if (selection.inProgress().isEmpty()) {
            if (!failed.isEmpty()) {
                return finishFailed(upgrade, failed, now);
            }
            if (pending.isEmpty()) {
                return finishSucceeded(upgrade, now);
            }
            if (overdue) {
                return failNode(upgrade, pending.get(), "The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline()
                        + ") passed before node " + pending.get().getName() + " could start.", now);
            }
        }
        if (hold != null) {
            recorder.held(upgrade, hold, now);
            return hold.step(now);
        }
        recorder.waiting(upgrade, "MaxUnavailable", "No further node starts now: " + selection.limit()
                + ". It starts when one of them is available again.", now);
        // Those nodes are not this upgrade's, so their changes do not wake it: it looks again.
        return Step.onEvent();
    }

    /** Where a node may stay while the upgrade is paused or its window closed: before or during its drain, before its Job, soaking. */
    private static boolean atSafeBoundary(UpgradeNodeStatus node) {
        return switch (node.getPhase()) {
            case Cordoned, Draining, Soaking -> true;
            case Upgrading -> node.getJobName() == null && node.getIsoState() == null;
            default -> false;
        };
    }

    private static List<DrainState> drains(NodeUpgradeStatus status) {
        return status.getNodes().stream().filter(n -> n.getPhase() == Phase.Draining).map(UpgradeNodeStatus::getDrain).toList();
    }

    private Step stepNode(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        return switch (node.getPhase()) {
            case Pending -> start(upgrade, node, now);
            case Cordoned -> startDrain(upgrade, node, now);
            case Draining -> drain(upgrade, node, now);
            case Upgrading -> upgradeStep(upgrade, node, now);
            case WaitingReady -> awaitReady(upgrade, node, now);
            case Soaking -> soak(upgrade, node, now);
            case Failed -> failNode(upgrade, node, node.getError(), now);
            case Succeeded, Skipped -> Step.next();
        };
    }

    private Step finishSucceeded(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        String target = upgrade.getSpec().getTargetVersion();
        List<UpgradeNodeStatus> left = status.getNodes().stream().filter(n -> n.getPhase() == Phase.Skipped && n.getVersion() == null).toList();
        String staleRecord = jobStep.checkCloudStackRecord(upgrade, now).map(stale -> " " + stale).orElse("");
        if (left.isEmpty()) {
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, "AllNodesUpgraded", "All " + status.getNodes().size()
                    + " selected nodes are at " + target + " and Ready." + staleRecord, now);
        } else {
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, "NodesSkipped", (status.getNodes().size() - left.size()) + " of "
                    + status.getNodes().size() + " selected nodes are at " + target + " and Ready; not upgraded: "
                    + left.stream().map(n -> n.getName() + " (" + n.getSkipReason() + ")").collect(Collectors.joining(", ")) + "." + staleRecord, now);
        }
        return Step.finished();
    }

    private Step finishFailed(NodeUpgrade upgrade, List<UpgradeNodeStatus> failed, Instant now) {
        String name = upgrade.getMetadata().getName();
        String errors = failed.size() == 1 ? "node " + failed.get(0).getName() + ": " + failed.get(0).getError()
                : "nodes " + failed.stream().map(n -> n.getName() + " (" + n.getError() + ")").collect(Collectors.joining("; "));
        String message = "NodeUpgrade " + name + " failed at " + errors
                + (errors.contains("retry") ? "" : " Retry with: kubectl annotate nu " + name + " " + NodeAnnotations.RETRY + "=$(date +%s) --overwrite");
        recorder.finished(upgrade, Stage.FAILED, Conditions.FAILED, "NodeFailed", message, now);
        return Step.finished();
    }

    /** A node's turn: unless it opted out meanwhile, it is locked and cordoned. */
    private Step start(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<String> excluded = work.node(node.getName()).flatMap(NodeAnnotations::excluded);
        if (excluded.isPresent()) {
            node.setAction(Action.Skip);
            node.setPhase(Phase.Skipped);
            node.setSkipReason(excluded.get());
            recorder.event(upgrade, NODE_SKIPPED, "Node " + node.getName() + " is not upgraded: " + excluded.get() + ".");
            return Step.next();
        }
        return lockAndCordon(upgrade, node, now);
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
            return failNode(upgrade, node, "Node " + node.getName() + " no longer exists; re-create the NodeUpgrade to plan again.", now);
        }
        KillPoint.NODEUPGRADE_LOCKED.reached();
        NodeWork.Cordoning cordoning = work.cordon(node.getName(), owner);
        KillPoint.NODEUPGRADE_CORDONED.reached();
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
        DrainTick tick = work.drainTick(node, owner(upgrade), drainOptions(upgrade), upgrade.getStatus().deadlineAt(now), now);
        KillPoint.NODEUPGRADE_DRAIN_STEP.reached();
        recorder.drainTick(upgrade, node.getName(), tick, now);
        if (tick.giveUp().isPresent()) {
            return tick.giveUp().get() == EscalationStep.Action.SkipNode
                    ? skipNode(upgrade, node, "its drain was given up by " + (tick.outcome() == DrainResult.Outcome.BLOCKED
                            ? "spec.drain.escalation's SkipNode when the drain ran out of attempts: " : "") + tick.why(), now)
                    : failNode(upgrade, node, "The drain of node " + node.getName() + " was given up: " + tick.why(), now);
        }
        return switch (tick.outcome()) {
            case IN_PROGRESS -> tick.next();
            case DONE -> {
                stepDone(node, "drain", now);
                node.setPhase(Phase.Upgrading);
                recorder.event(upgrade, OperationRecorder.NODE_DRAINED, "Drained node " + node.getName() + ".");
                yield Step.next();
            }
            default -> failNode(upgrade, node, "The drain of node " + node.getName() + " did not finish: " + tick.why(), now);
        };
    }

    /** The escalation ladder gave the node up with SkipNode: it is given back as it is, not upgraded, and the others go on. */
    private Step skipNode(NodeUpgrade upgrade, UpgradeNodeStatus node, String reason, Instant now) {
        work.release(node.getName(), owner(upgrade), true);
        recorder.drainOver(upgrade, node.getName());
        node.setAction(Action.Skip);
        node.setPhase(Phase.Skipped);
        node.setSkipReason(BlockedByReport.tail(reason));
        node.setCompletedAt(Timestamps.format(now));
        recorder.warning(upgrade, NODE_SKIPPED, "Node " + node.getName() + " is not upgraded: " + reason
                + ". It is given back (uncordoned unless it was cordoned before) and the upgrade goes on with the other nodes.");
        return Step.next();
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
        KillPoint.NODEUPGRADE_RELEASED.reached();
        node.setError(null);
        Instant started = Timestamps.parse(node.getStartedAt());
        if (started != null) {
            recorder.nodeStep("node", Duration.between(started, now));
        }
        recorder.event(upgrade, "NodeUpgraded", "Node " + node.getName() + " is Ready at " + node.getVersion() + " (was " + node.getFromVersion() + ")"
                + (uncordoned ? " and uncordoned." : "; it was cordoned before, so it stays cordoned."));
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
     * The node failed: the ISO is detached first (polled), then the node is given back (uncordoned unless
     * it was cordoned before; completedAt marks it given back). No further node starts; the upgrade fails
     * once the nodes still in progress are done. Re-entered until the ISO is gone.
     */
    private Step failNode(NodeUpgrade upgrade, UpgradeNodeStatus node, String error, Instant now) {
        node.setPhase(Phase.Failed);
        node.setError(BlockedByReport.tail(error));
        Optional<Step> detaching = jobStep.detachBeforeGivingUp(upgrade, node, now);
        if (detaching.isPresent()) {
            return detaching.get();
        }
        // Failed is written before the node is given back: a restart in between fails it again, never drains or upgrades it uncordoned.
        store.persist(upgrade);
        work.release(node.getName(), owner(upgrade), true);
        KillPoint.NODEUPGRADE_FAILED_RELEASED.reached();
        recorder.drainOver(upgrade, node.getName());
        node.setCompletedAt(Timestamps.format(now));
        List<String> others = upgrade.getStatus().getNodes().stream().filter(UpgradeRollout::inProgress).map(UpgradeNodeStatus::getName).toList();
        if (!others.isEmpty()) {
            recorder.warning(upgrade, "NodeFailed", "Node " + node.getName() + " failed: " + error + " No further node starts; "
                    + String.join(", ", others) + " in progress finish first.");
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
     * Deleting a NodeUpgrade mid-operation must not strand nodes: what we cordoned is uncordoned and our
     * locks released. A node whose upgrade runs is only released: its Job is orphaned first (the garbage
     * collector would otherwise kill kubeadm half-way), and uncordoning it while kubeadm works on it would
     * let pods land on a node about to restart its kubelet.
     */
    @Override
    public DeleteControl cleanup(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        List<UpgradeNodeStatus> planned = upgrade.getStatus() == null ? List.of() : upgrade.getStatus().getNodes();
        Instant now = clock.instant();
        for (UpgradeNodeStatus node : planned) {
            if (node.getPhase() == Phase.Succeeded || node.getPhase() == Phase.Skipped || node.getPhase() == Phase.Soaking
                    || node.getPhase() == Phase.Failed && node.getCompletedAt() != null) {
                continue;
            }
            if (node.getPhase() == Phase.Upgrading || node.getPhase() == Phase.WaitingReady) {
                Optional<String> orphaned = jobStep.orphanRunningJob(upgrade, node);
                orphaned.ifPresent(job -> KillPoint.NODEUPGRADE_JOB_ORPHANED.reached());
                recorder.warning(upgrade, "LeftCordoned", "NodeUpgrade " + upgrade.getMetadata().getName() + " was deleted while node "
                        + node.getName() + " was being upgraded; the node is released but stays cordoned"
                        + orphaned.map(job -> ", and its upgrade Job " + job + " runs to its end").orElse("")
                        + ". Uncordon it (kubectl uncordon " + node.getName() + ") once it is healthy.");
                work.release(node.getName(), owner(upgrade), false);
                KillPoint.NODEUPGRADE_DELETED_RELEASED.reached();
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
            KillPoint.NODEUPGRADE_DELETED_RELEASED.reached();
        }
        return DeleteControl.defaultDelete();
    }

    private DrainOptions drainOptions(NodeUpgrade upgrade) {
        return DrainOptions.effective(upgrade.getSpec().getDrain(), settings.drain());
    }

    static String owner(NodeUpgrade upgrade) {
        return NodeLock.owner(KIND, upgrade.getMetadata().getName(), upgrade.getMetadata().getUid());
    }
}
