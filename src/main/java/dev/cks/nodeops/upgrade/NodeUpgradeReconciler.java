package dev.cks.nodeops.upgrade;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainClient;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.PodSelection;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.operation.DrainWakeups;
import dev.cks.nodeops.operation.FinishEstimate;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.operation.WindowFit;
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
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;

/**
 * Upgrades the selected nodes one at a time, as a resumable state machine: every reconcile advances
 * the current node by one step and stores everything in status, then asks to be called again (a
 * reschedule, or a Node / Job event). The plan is made once; then the {@link RolloutGate} decides which
 * nodes work in each reconcile and {@link NodeUpgradePipeline} takes each one step further (docs/upgrade.md).
 */
@ControllerConfiguration(name = "nodeupgrade", generationAwareEventProcessing = false,
        informer = @Informer(onUpdateFilter = RetryOrSpecChanged.class))
// The API server may be gone for minutes while a control-plane node is upgraded: never give up retrying.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
public class NodeUpgradeReconciler implements Reconciler<NodeUpgrade>, Cleaner<NodeUpgrade> {
    static final String KIND = "NodeUpgrade";
    static final String NOTHING_SELECTED = "NothingSelected";
    static final String OVERLAPS = "Overlaps";
    static final String TARGET_CHANGED = "TargetChanged";
    static final String NEWER_THAN_TARGET = "NewerThanTarget";
    static final String CORRECTION_REFUSED = "CorrectionRefused";

    private final Clock clock;
    private final OperatorSettings settings;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final UpgradeJobStep jobStep;
    private final NodeUpgradePipeline pipeline;
    private final ApiServerVersions apiServers;
    private final NodeCache nodeCache;
    /**
     * The state of the upgrade's own nodes that the rollout counts against maxUnavailable (Ready, cordoned, by
     * whom), read in every reconcile: from the Node informer's cache, so that a reconcile costs no list of every
     * Node of the cluster (two pages of 500 at 1,000 nodes, each reconcile of a running upgrade). The cache lags
     * a change by the watch's delay, as a list read just before that change would. Tests without the cache read
     * through {@link NodeWork#node}.
     */
    private final Function<String, Optional<Node>> rolloutNode;
    /** Every NodeUpgrade, read when a Continuous one plans or looks at its nodes: two must not hold one node. */
    private final Supplier<List<NodeUpgrade>> peers;

    /**
     * The NodeUpgrades in the operator's own informer (JOSDK's primary cache), handed over with the event sources: a
     * Continuous NodeUpgrade looks at its peers on every Node change that wakes it, which must not cost a list of
     * every NodeUpgrade from the API server each time.
     */
    private static final class CachedPeers implements Supplier<List<NodeUpgrade>> {
        private volatile IndexerResourceCache<NodeUpgrade> cache;

        @Override
        public List<NodeUpgrade> get() {
            if (cache == null) {
                throw new IllegalStateException("the NodeUpgrade cache is read before JOSDK prepared the event sources");
            }
            return cache.list().toList();
        }
    }

    @Inject
    public NodeUpgradeReconciler(KubernetesClient client, DrainClient drainClient, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings, NodeCache nodeCache) {
        this(clock, settings, cloudStack, OperationPorts.onCluster(client, drainClient, KIND, events, metrics, settings), UpgradeJobs.on(client),
                ApiServerVersions.on(client), nodeCache, new CachedPeers());
    }

    NodeUpgradeReconciler(Clock clock, OperatorSettings settings, CloudStackAccess cloudStack, OperationPorts ports, UpgradeJobs jobs,
            ApiServerVersions apiServers) {
        this(clock, settings, cloudStack, ports, jobs, apiServers, List::of);
    }

    /** Tests without event sources (no Node cache), with the other NodeUpgrades they say there are. */
    NodeUpgradeReconciler(Clock clock, OperatorSettings settings, CloudStackAccess cloudStack, OperationPorts ports, UpgradeJobs jobs,
            ApiServerVersions apiServers, Supplier<List<NodeUpgrade>> peers) {
        this(clock, settings, cloudStack, ports, jobs, apiServers, null, peers);
    }

    private NodeUpgradeReconciler(Clock clock, OperatorSettings settings, CloudStackAccess cloudStack, OperationPorts ports, UpgradeJobs jobs,
            ApiServerVersions apiServers, NodeCache nodeCache, Supplier<List<NodeUpgrade>> peers) {
        this.peers = peers;
        this.clock = clock;
        this.nodeCache = nodeCache;
        this.apiServers = apiServers;
        this.settings = settings;
        this.work = ports.work();
        this.recorder = ports.recorder();
        this.store = ports.store();
        this.jobStep = new UpgradeJobStep(jobs, new CloudStackIsoExecutor(cloudStack), recorder, store, settings);
        this.pipeline = new NodeUpgradePipeline(settings, work, recorder, store, jobStep);
        this.rolloutNode = nodeCache == null ? work::node : nodeCache::get;
    }

    @Override
    public List<EventSource<?, NodeUpgrade>> prepareEventSources(EventSourceContext<NodeUpgrade> context) {
        store.writeAs(context.getControllerConfiguration().fieldManager());
        if (peers instanceof CachedPeers cached) {
            cached.cache = context.getPrimaryCache();
        }
        List<EventSource<?, NodeUpgrade>> sources = new ArrayList<>(UpgradeEventSources.prepare(context, settings, nodeCache));
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
        if (upgrade.getSpec() != null && ContinuousHold.newRollout(upgrade.getSpec(), status)) {
            recorder.event(upgrade, TARGET_CHANGED, "spec.targetVersion of NodeUpgrade " + upgrade.getMetadata().getName() + " changed from "
                    + status.getTargetVersion() + " to " + upgrade.getSpec().getTargetVersion() + ": a new rollout to " + upgrade.getSpec().getTargetVersion()
                    + " is planned, with the version skew guard.");
            UpgradeProgress.startOver(status);
        }
        if (status.finished()) {
            return UpdateControl.noUpdate();
        }
        NodeUpgrade working = atRolloutTarget(upgrade);
        return recorder.step(working, NodeUpgradeValidation.problems(upgrade.getSpec()), now,
                () -> status.getStartedAt() == null ? plan(working, now) : advance(working, now));
    }

    /**
     * The NodeUpgrade as its current rollout sees it: a Continuous one whose target changed while a node was in progress
     * finishes that node at the version its Job was made for; the new rollout is planned once none is in progress.
     */
    private static NodeUpgrade atRolloutTarget(NodeUpgrade upgrade) {
        if (upgrade.getSpec() == null || !ContinuousHold.targetChanged(upgrade.getSpec(), upgrade.getStatus())) {
            return upgrade;
        }
        NodeUpgrade pinned = new NodeUpgrade();
        pinned.setMetadata(upgrade.getMetadata());
        pinned.setSpec(upgrade.getSpec().withTargetVersion(upgrade.getStatus().getTargetVersion()));
        pinned.setStatus(upgrade.getStatus());
        return pinned;
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
        List<UpgradeNodeStatus> planned = UpgradePlan.plan(cluster, spec.nodeSelection(), spec.getTargetVersion());
        String object = KIND + " " + upgrade.getMetadata().getName();
        Optional<String> deprecation = NodeSelection.deprecation(spec.getNodeSelector(), object);
        deprecation.ifPresent(message -> recorder.warning(upgrade, NodeSelection.DEPRECATED_NODE_SELECTOR, message));
        Optional<String> podDeprecation = PodSelection.deprecation(pipeline.drainOptions(upgrade).getPodSelector(), object, true);
        podDeprecation.ifPresent(message -> recorder.warning(upgrade, PodSelection.DEPRECATED_POD_SELECTOR, message));
        if (spec.continuous()) {
            Map<String, List<String>> earlier = ContinuousHold.overlaps(upgrade, peers.get(), cluster).earlier();
            if (!earlier.isEmpty()) {
                recorder.refused(upgrade, OVERLAPS, ContinuousHold.overlapRefusal(upgrade, earlier), now);
                return Step.finished();
            }
            planned = ContinuousHold.neverDown(planned, spec.getTargetVersion(), ContinuousHold.attempt(now));
        }
        status.setTargetVersion(spec.getTargetVersion());
        status.setNodes(new ArrayList<>(planned));
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
        status.setProgress(UpgradeProgress.progress(planned));
        if (planned.isEmpty() && !spec.continuous()) {
            // Most often a typo in the selector: succeeded (nothing is left undone), but said loudly.
            NodeSelection selection = spec.nodeSelection();
            String message = selection.selectsEverything() ? "The cluster has no node; nothing was upgraded."
                    : "No node matches the selector " + selection + "; nothing was upgraded. Compare it with kubectl get nodes -l '"
                            + selection + "', then create the NodeUpgrade again.";
            recorder.warning(upgrade, NOTHING_SELECTED, message);
            recorder.finished(upgrade, Stage.SUCCEEDED, Conditions.SUCCEEDED, NOTHING_SELECTED, message, now);
            return Step.finished();
        }
        Optional<String> skew = VersionSkew.refusal(planned, cluster, apiServers.read(), spec.getTargetVersion());
        if (skew.isPresent()) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, skew.get(), now);
            return Step.finished();
        }
        List<String> toUpgrade = planned.stream().filter(n -> n.getAction() != Action.Skip).map(UpgradeNodeStatus::getName).toList();
        PreflightGate.Verdict verdict = PreflightGate.check(work, toUpgrade, Draining.ONE_AT_A_TIME, pipeline.drainOptions(upgrade), spec.getPreflight(), now);
        if (verdict instanceof PreflightGate.Refuse refuse) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, refuse.message(), now);
            return Step.finished();
        }
        recorder.preflight(upgrade, (PreflightGate.Proceed) verdict, now);
        Optional<FinishEstimate.Estimate> estimate = UpgradeEstimate.of(spec, planned, settings.estimate(), now);
        WindowFit.Verdict fit = WindowFit.check(estimate, spec.getWindow(), spec.getPreflight(), KIND + " " + upgrade.getMetadata().getName(), now);
        if (fit instanceof WindowFit.Refuse refuse) {
            recorder.refused(upgrade, OperationRecorder.REFUSED, refuse.message(), now);
            return Step.finished();
        }
        recorder.windowFit(upgrade, (WindowFit.Proceed) fit, now);
        recorder.estimate(upgrade, estimate);
        String order = planned.stream().map(n -> n.getName() + " (" + n.getAction() + (n.getAction() == Action.Skip ? ": " + n.getSkipReason() : "") + ")")
                .collect(Collectors.joining(", "));
        // The Accepted condition keeps the deprecations in view as long as the upgrade is shown.
        recorder.accepted(upgrade, "Planned", "NodeUpgrade " + upgrade.getMetadata().getName() + " to " + spec.getTargetVersion() + ": " + order + "."
                + deprecation.map(message -> " " + message).orElse("") + podDeprecation.map(message -> " " + message).orElse(""), now);
        planned.stream().filter(n -> n.getAction() == Action.Skip && n.getVersion() == null)
                .forEach(n -> recorder.event(upgrade, NodeUpgradePipeline.NODE_SKIPPED, "Node " + n.getName() + " is not upgraded: " + n.getSkipReason() + "."));
        status.setPhase(NodeUpgradeStatus.Phase.Running);
        recorder.progressing(upgrade, "Planned", "Upgrading " + toUpgrade.size() + " of " + planned.size() + " selected nodes to "
                + spec.getTargetVersion() + ".", now);
        return Step.next();
    }

    /** One turn of every node the {@link RolloutGate} lets work now; when none may, the upgrade ends, holds or waits. */
    private Step advance(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        RolloutGate.Windows windows = RolloutGate.windows(upgrade.getSpec(), now);
        recorder.window(upgrade, windows.newWork());
        if (windows.resume(status.getNodes())) {
            // Not held (any more): the time held moves the deadline before the gate looks at it.
            recorder.resumed(upgrade, status.getNodes().stream().filter(n -> n.getPhase() == Phase.Draining)
                    .map(UpgradeNodeStatus::getDrain).toList(), now);
        }
        List<Node> ownNodes = status.getNodes().stream().map(n -> rolloutNode.apply(n.getName())).flatMap(Optional::stream).toList();
        RolloutGate.Round round = RolloutGate.round(upgrade.getSpec(), status, windows, ownNodes, owner(upgrade), now);
        List<Step> steps = new ArrayList<>();
        for (RolloutGate.Turn turn : round.turns()) {
            if (status.finished()) {
                // Refused by a node's turn (the ISO canary): no other node starts.
                return Step.finished();
            }
            steps.add(turn instanceof RolloutGate.GiveUp giveUp ? pipeline.giveUp(upgrade, giveUp.node(), giveUp.error(), now)
                    : pipeline.step(upgrade, turn.node(), now));
        }
        if (status.finished()) {
            return Step.finished();
        }
        status.setProgress(UpgradeProgress.progress(status.getNodes()));
        List<String> busy = status.getNodes().stream().filter(UpgradeRollout::inProgress).map(UpgradeNodeStatus::getName).toList();
        status.setCurrentNode(busy.isEmpty() ? null : String.join(",", busy));
        // Kept current as nodes finish; the end of the upgrade (or its hold) clears it.
        recorder.estimate(upgrade, UpgradeEstimate.of(upgrade.getSpec(), status.getNodes(), settings.estimate(), now));
        if (steps.isEmpty()) {
            return idle(upgrade, round.idle(), now);
        }
        if (Boolean.TRUE.equals(upgrade.getSpec().getPaused())) {
            recorder.pausing(upgrade, "spec.paused is true: the upgrade stops once " + String.join(", ", busy)
                    + " reach a safe boundary (a node's upgrade Job and its wait for Ready are not interrupted).", now);
        }
        return Step.soonest(steps);
    }

    /** No node was worked on in this reconcile: the upgrade is over, held, or waits for room under maxUnavailable. */
    private Step idle(NodeUpgrade upgrade, RolloutGate.Idle idle, Instant now) {
        if (idle instanceof RolloutGate.FinishFailed finish) {
            return finishFailed(upgrade, finish.failed(), now);
        }
        if (idle instanceof RolloutGate.FinishSucceeded) {
            return upgrade.getSpec().continuous() ? hold(upgrade, now) : finishSucceeded(upgrade, now);
        }
        if (idle instanceof RolloutGate.StartTooLate late) {
            return pipeline.fail(upgrade, late.node(), late.error(), now);
        }
        if (idle instanceof RolloutGate.Held held) {
            recorder.held(upgrade, held.hold(), now);
            return held.hold().step(now);
        }
        recorder.waiting(upgrade, "MaxUnavailable", "No further node starts now: " + ((RolloutGate.NoRoom) idle).limit()
                + ". It starts when one of them is available again.", now);
        // Those nodes are not this upgrade's, so their changes do not wake it: it looks again.
        return Step.onEvent();
    }

    /**
     * A Continuous NodeUpgrade with every node done: it looks at the nodes its selector matches. A node below the target
     * is planned again and the rollout's rules take it from there (preflight and the skew guard first, here); else it
     * holds, and looks again at the next Node change that concerns it or after spec.holdIntervalSeconds.
     */
    private Step hold(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        NodeUpgradeSpec spec = upgrade.getSpec();
        String target = spec.getTargetVersion();
        Step again = Step.after(Duration.ofSeconds(spec.getHoldIntervalSeconds()));
        HoldStatus hold = status.getHold() == null ? new HoldStatus() : status.getHold();
        status.setHold(hold);
        ContinuousHold.lastCorrected(status.getNodes(), hold.getSince()).ifPresent(node -> {
            hold.setLastCorrectedNode(node.getName());
            hold.setLastCorrectedAt(node.getCompletedAt());
        });
        List<Node> cluster = work.nodes();
        ContinuousHold.Overlaps overlaps = ContinuousHold.overlaps(upgrade, peers.get(), cluster);
        if (!overlaps.earlier().isEmpty()) {
            // A node newly labelled into both selections: the later NodeUpgrade stops, as it would have been refused at creation.
            recorder.refused(upgrade, OVERLAPS, ContinuousHold.overlapRefusal(upgrade, overlaps.earlier()), now);
            return Step.finished();
        }
        hold.setOverlappedBy(overlaps.later().keySet().stream().toList());
        if (overlaps.later().isEmpty()) {
            Conditions.remove(status.getConditions(), Conditions.OVERLAPPING);
        } else {
            recorder.condition(upgrade, Conditions.OVERLAPPING, true, OVERLAPS, "Continuous NodeUpgrade(s) created later select nodes this one holds, "
                    + "and are refused: " + overlaps.later().entrySet().stream().map(e -> e.getKey() + " (" + String.join(", ", e.getValue()) + ")")
                            .collect(Collectors.joining("; ")) + ".", now);
        }
        ContinuousHold.Scan scan = ContinuousHold.scan(cluster, spec.nodeSelection(), target, status.getNodes(), now);
        status.getNodes().removeIf(n -> scan.gone().contains(n.getName()));
        List<String> newlyNewer = scan.newer().stream().filter(n -> !hold.getNewer().contains(n)).toList();
        if (!newlyNewer.isEmpty()) {
            recorder.event(upgrade, NEWER_THAN_TARGET, "Not touched: " + String.join(", ", newlyNewer) + " run(s) a version newer than the target "
                    + target + "; a NodeUpgrade never takes a node down.");
        }
        hold.setNewer(scan.newer().stream().limit(HoldStatus.NAMED_NEWER).toList());
        hold.setAboveTarget(scan.newer().size());
        hold.setBelowTarget(scan.belowTarget());
        hold.setLastScanAt(Timestamps.format(now));
        if (!scan.corrections().isEmpty()) {
            List<UpgradeNodeStatus> entries = scan.corrections().stream().map(ContinuousHold.Correction::entry).toList();
            Optional<String> skew = VersionSkew.refusal(entries, cluster, apiServers.read(), target);
            if (skew.isPresent()) {
                recorder.waiting(upgrade, CORRECTION_REFUSED, skew.get() + " Looked at again in " + spec.getHoldIntervalSeconds() + " s.", now);
                return again;
            }
            List<String> names = entries.stream().map(UpgradeNodeStatus::getName).toList();
            PreflightGate.Verdict verdict = PreflightGate.check(work, names, Draining.ONE_AT_A_TIME, pipeline.drainOptions(upgrade), spec.getPreflight(), now);
            if (verdict instanceof PreflightGate.Refuse refuse) {
                recorder.waiting(upgrade, CORRECTION_REFUSED, refuse.message() + " Looked at again in " + spec.getHoldIntervalSeconds() + " s.", now);
                return again;
            }
            recorder.preflight(upgrade, (PreflightGate.Proceed) verdict, now);
            status.setNodes(ContinuousHold.withCorrections(status.getNodes(), scan.corrections()));
            // A correction is a rollout of its own: its deadline counts from now.
            status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
            status.setProgress(UpgradeProgress.progress(status.getNodes()));
            recorder.correcting(upgrade, scan.corrections().stream().map(ContinuousHold.Correction::message).toList(), now);
            return Step.next();
        }
        boolean begins = !Conditions.isTrue(status.getConditions(), Conditions.HOLDING);
        String staleRecord = begins ? jobStep.checkCloudStackRecord(upgrade, now).map(stale -> " " + stale).orElse("") : "";
        if (begins) {
            hold.setSince(Timestamps.format(now));
        }
        long atTarget = status.getNodes().stream().filter(n -> n.getVersion() != null && UpgradeProgress.isFinished(n)).count();
        recorder.holding(upgrade, "Holding " + target + ": " + atTarget + " of " + status.getNodes().size() + " selected nodes are at it"
                + (scan.newer().isEmpty() ? "" : "; newer, not touched: " + String.join(", ", hold.getNewer()))
                + (scan.notNow().isEmpty() ? "" : "; below it, upgraded when they may be: " + String.join(", ", scan.notNow()))
                + ". A node that joins or comes back below " + target + " is upgraded." + staleRecord, now);
        return again;
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

    /**
     * Deleting a NodeUpgrade mid-operation must not strand nodes: every node not settled is released
     * ({@link NodeUpgradePipeline#releaseOnDelete}); the finalizer stays while an ISO is being detached.
     */
    @Override
    public DeleteControl cleanup(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        List<UpgradeNodeStatus> planned = upgrade.getStatus() == null ? List.of() : upgrade.getStatus().getNodes();
        Instant now = clock.instant();
        for (UpgradeNodeStatus node : planned) {
            boolean settled = node.getPhase() == Phase.Succeeded || node.getPhase() == Phase.Skipped || node.getPhase() == Phase.Soaking
                    || node.getPhase() == Phase.Failed && node.getCompletedAt() != null;
            Optional<Step> detaching = settled ? Optional.empty() : pipeline.releaseOnDelete(upgrade, node, now);
            if (detaching.isPresent()) {
                return DeleteControl.noFinalizerRemoval().rescheduleAfter(detaching.get().after());
            }
        }
        if (upgrade.getStatus() != null) {
            jobStep.deleteFinishedJobs(upgrade);
        }
        return DeleteControl.defaultDelete();
    }

    static String owner(NodeUpgrade upgrade) {
        return NodeLock.owner(KIND, upgrade.getMetadata().getName(), upgrade.getMetadata().getUid());
    }
}
