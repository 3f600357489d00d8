package dev.cks.nodeops.upgrade;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport;
import dev.cks.nodeops.drain.DrainClient;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainPreflight;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.NodeDrainer;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.nodes.CordonRecord;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;

/**
 * Upgrades the selected nodes one at a time, as a resumable state machine: every reconcile advances
 * the current node by one step and stores everything in status, then asks to be called again (a
 * reschedule, or a Node / Job event). Per node: lock → cordon → drain → executor Job → Ready at the
 * target → uncordon (only if we cordoned) → unlock. A killed operator resumes from status; the Job's
 * deterministic name keeps it from creating a second one.
 */
@ControllerConfiguration(name = "nodeupgrade", generationAwareEventProcessing = false,
        informer = @Informer(onUpdateFilter = RetryOrSpecChanged.class))
// The API server may be gone for minutes while a control-plane node is upgraded: never give up retrying.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
public class NodeUpgradeReconciler implements Reconciler<NodeUpgrade>, Cleaner<NodeUpgrade> {
    static final String KIND = "NodeUpgrade";
    private static final Logger LOG = Logger.getLogger(NodeUpgradeReconciler.class);
    /** The next step of a node follows at once; a short delay lets the status patch land first. */
    private static final Duration NEXT_STEP = Duration.ofMillis(200);
    /** When the API server or CloudStack did not answer: look again soon, the operation goes on. */
    private static final Duration AFTER_API_ERROR = Duration.ofSeconds(5);
    /** A safety net only: Job and Node events wake the reconciler long before this. */
    private static final Duration RECHECK = Duration.ofSeconds(30);

    private final KubernetesClient client;
    private final Clock clock;
    private final CloudStackAccess cloudStack;
    private final EventRecorder events;
    private final OperationMetrics metrics;
    private final OperatorSettings settings;
    private final NodeLock locks;
    private final Cordon cordons;
    private final NodeDrainer drainer;
    private final DrainPreflight preflight;
    private final CloudStackIsoExecutor isoExecutor;
    private InformerEventSource<Node, NodeUpgrade> nodes;

    public NodeUpgradeReconciler(KubernetesClient client, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings) {
        this.client = client;
        this.clock = clock;
        this.cloudStack = cloudStack;
        this.events = events;
        this.metrics = metrics;
        this.settings = settings;
        this.locks = new NodeLock(client);
        this.cordons = new Cordon(client);
        KubernetesClient evictions = DrainClient.from(client);
        this.drainer = new NodeDrainer(evictions, result -> metrics.evictionAnswered("NodeUpgrade", result));
        this.preflight = new DrainPreflight(evictions);
        this.isoExecutor = new CloudStackIsoExecutor(cloudStack, client);
    }

    @Override
    public List<EventSource<?, NodeUpgrade>> prepareEventSources(EventSourceContext<NodeUpgrade> context) {
        // Node changes (Ready, kubelet version, a lock released) wake the upgrades still under way.
        nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, NodeUpgrade.class)
                .withName("nodes")
                .withSecondaryToPrimaryMapper(node -> context.getPrimaryCache().list(NodeUpgradeReconciler::isUnderWay)
                        .map(ResourceID::fromResource).collect(Collectors.toSet()))
                .build(), context);
        // Our Jobs, by their label, wake the upgrade that owns them when they finish.
        InformerEventSource<Job, NodeUpgrade> jobs = new InformerEventSource<>(InformerEventSourceConfiguration.from(Job.class, NodeUpgrade.class)
                .withName("upgrade-jobs")
                .withNamespaces(Set.of(settings.namespace()))
                .withFollowControllerNamespacesChanges(false)
                .withLabelSelector(UpgradeJob.LABEL_NODEUPGRADE)
                .withSecondaryToPrimaryMapper(job -> Optional.ofNullable(job.getMetadata().getLabels())
                        .map(l -> l.get(UpgradeJob.LABEL_NODEUPGRADE)).map(name -> Set.of(new ResourceID(name))).orElse(Set.of()))
                .build(), context);
        return List.of(nodes, jobs);
    }

    private static boolean isUnderWay(NodeUpgrade upgrade) {
        NodeUpgradeStatus.Phase phase = upgrade.getStatus() == null ? null : upgrade.getStatus().getPhase();
        return phase != NodeUpgradeStatus.Phase.Succeeded && phase != NodeUpgradeStatus.Phase.Failed;
    }

    @Override
    public UpdateControl<NodeUpgrade> reconcile(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        NodeUpgradeStatus status = upgrade.getStatus() == null ? new NodeUpgradeStatus() : upgrade.getStatus();
        upgrade.setStatus(status);
        long generation = upgrade.getMetadata().getGeneration();
        Instant now = clock.instant();
        status.setObservedGeneration(generation);
        List<String> problems = NodeUpgradeValidation.problems(upgrade.getSpec());
        if (!problems.isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "InvalidSpec", String.join("; ", problems), generation, now);
            status.setPhase(NodeUpgradeStatus.Phase.Failed);
            status.setMessage(String.join("; ", problems));
            return UpdateControl.patchStatus(upgrade);
        }
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "The spec is valid.", generation, now);

        String retry = annotation(upgrade, NodeAnnotations.RETRY);
        if (status.getPhase() == null) {
            // An annotation present at creation is not a retry of anything.
            status.setRetryToken(retry);
        } else if (isFinished(status) && UpgradeProgress.retryRequested(retry, status.getRetryToken())) {
            startOver(upgrade, retry, now);
        }
        if (isFinished(status)) {
            return UpdateControl.patchStatus(upgrade);
        }
        try {
            Duration next = status.getNodes().isEmpty() && status.getStartedAt() == null ? plan(upgrade, now) : advance(upgrade, now);
            metrics.phase(KIND, name(upgrade), status.getPhase().name());
            UpdateControl<NodeUpgrade> control = UpdateControl.patchStatus(upgrade);
            return next == null ? control : control.rescheduleAfter(next);
        } catch (KubernetesClientException | CloudStackException e) {
            // The API server restarting under a control-plane upgrade, or CloudStack busy: the step runs again.
            LOG.infof("NodeUpgrade %s: %s; the step will be tried again", name(upgrade), e.getMessage());
            status.setMessage(BlockedByReport.tail("Waiting for the API to answer again (" + e.getMessage() + "); the upgrade carries on then."));
            return UpdateControl.patchStatus(upgrade).rescheduleAfter(AFTER_API_ERROR);
        }
    }

    /** A retry after Failed (or Succeeded, to catch nodes that went NotReady): plan again from what the nodes report now. */
    private void startOver(NodeUpgrade upgrade, String retry, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        status.setRetryToken(retry);
        status.setNodes(new ArrayList<>());
        status.setStartedAt(null);
        status.setCompletedAt(null);
        status.setCurrentNode(null);
        status.setPhase(NodeUpgradeStatus.Phase.Pending);
        Conditions.remove(status.getConditions(), Conditions.FAILED);
        Conditions.remove(status.getConditions(), Conditions.SUCCEEDED);
        events.normal(upgrade, "Retrying", "Retrying NodeUpgrade " + name(upgrade) + " (retry " + retry + "): nodes Ready at "
                + upgrade.getSpec().getTargetVersion() + " are skipped.");
    }

    private Duration plan(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        NodeUpgradeSpec spec = upgrade.getSpec();
        List<Node> all = nodes.list(n -> true).sorted(Comparator.comparing(n -> n.getMetadata().getName())).toList();
        List<UpgradeNodeStatus> planned = UpgradePlan.plan(all, spec.getNodeSelector(), spec.getTargetVersion());
        status.setNodes(new ArrayList<>(planned));
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
        status.setProgress(UpgradeProgress.progress(planned));
        long generation = upgrade.getMetadata().getGeneration();
        if (planned.isEmpty()) {
            return succeed(upgrade, "No node matches spec.nodeSelector; nothing to upgrade.", now);
        }
        List<String> toUpgrade = planned.stream().filter(n -> n.getAction() != Action.Skip).map(UpgradeNodeStatus::getName).toList();
        String order = planned.stream().map(n -> n.getName() + " (" + n.getAction() + ")").collect(Collectors.joining(", "));
        events.normal(upgrade, "Planned", "NodeUpgrade " + name(upgrade) + " to " + spec.getTargetVersion() + ": " + order + ".");
        if (spec.getPreflight() != Preflight.Skip && !toUpgrade.isEmpty()) {
            PreflightPrediction.Report report;
            try {
                report = preflight.check(toUpgrade, DrainOptions.effective(spec.getDrain(), settings.drain()), now);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KubernetesClientException("interrupted during the drain preflight");
            } catch (IllegalArgumentException invalidSelector) {
                return failOperation(upgrade, null, "The drain's podSelector is invalid: " + invalidSelector.getMessage() + " Fix spec.drain.podSelector.", now);
            }
            if (report.predictsBlock()) {
                if (spec.getPreflight() == Preflight.Fail) {
                    return failOperation(upgrade, null, report.describe() + "\nNothing was cordoned; fix the cause or set preflight: Warn.", now);
                }
                events.warning(upgrade, "PreflightWarning", report.describe());
            }
        }
        status.setPhase(NodeUpgradeStatus.Phase.Running);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, true, "Planned",
                "Upgrading " + toUpgrade.size() + " of " + planned.size() + " selected nodes to " + spec.getTargetVersion() + ".", generation, now);
        return NEXT_STEP;
    }

    /** One step of the current node; returns when to be called again (null: only on an event). */
    private Duration advance(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        Optional<UpgradeNodeStatus> current = UpgradeProgress.current(status.getNodes());
        status.setProgress(UpgradeProgress.progress(status.getNodes()));
        if (current.isEmpty()) {
            return succeed(upgrade, "All " + status.getNodes().size() + " selected nodes are at " + upgrade.getSpec().getTargetVersion() + " and Ready.", now);
        }
        UpgradeNodeStatus node = current.get();
        status.setCurrentNode(node.getName());
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
            case Failed -> failNode(upgrade, node, node.getError(), now);
            case Succeeded, Skipped -> NEXT_STEP;
        };
    }

    private Duration lockAndCordon(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        long generation = upgrade.getMetadata().getGeneration();
        if (upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.CloudStackIso) {
            KubernetesCluster cluster = isoCluster(upgrade, node);
            if (cluster == null) {
                return null;
            }
            if (CloudStackAccess.isBusy(cluster)) {
                return waitFor(upgrade, "CloudStackBusy", "CloudStack is changing CKS cluster " + cluster.name() + " (state " + cluster.state()
                        + "); node " + node.getName() + " is upgraded once that is over.", now, RECHECK);
            }
            try {
                // No VM or no usable ISO: refuse before the node is cordoned and drained for nothing.
                UpgradeExecutor.CloudStackIso iso = upgrade.getSpec().getExecutor().getCloudStackIso();
                node.setVmId(isoExecutor.choose(cluster, node.getName(), iso == null ? null : iso.getKubernetesVersionId(),
                        upgrade.getSpec().getTargetVersion()).vmId());
            } catch (CloudStackIsoExecutor.Refused refused) {
                return failNode(upgrade, node, refused.getMessage(), now);
            }
        }
        NodeLock.Outcome lock = locks.acquire(node.getName(), owner(upgrade));
        if (lock instanceof NodeLock.HeldBy held) {
            return waitFor(upgrade, "NodeLocked", "Node " + node.getName() + " is locked by " + held.owner()
                    + "; this upgrade continues when that operation finishes and releases it.", now, null);
        }
        if (lock instanceof NodeLock.NodeMissing) {
            return failNode(upgrade, node, "Node " + node.getName() + " no longer exists; re-create the NodeUpgrade to plan again.", now);
        }
        if (status.getPhase() == NodeUpgradeStatus.Phase.Waiting) {
            status.setPhase(NodeUpgradeStatus.Phase.Running);
            Conditions.set(status.getConditions(), Conditions.WAITING, false, "Resumed", "Node " + node.getName() + " is free again.", generation, now);
        }
        CordonRecord cordon = cordons.cordon(node.getName(), owner(upgrade));
        if (!cordon.unschedulable()) {
            return failNode(upgrade, node, cordon.note().isEmpty() ? "Node " + node.getName() + " could not be cordoned." : cordon.note(), now);
        }
        node.setCordonedByUs(cordon.cordonedByUs());
        node.setStartedAt(Timestamps.format(now));
        node.setPhase(Phase.Cordoned);
        events.normal(upgrade, "Cordoned", cordon.cordonedByUs() ? "Cordoned node " + node.getName() + "."
                : cordon.note());
        return NEXT_STEP;
    }

    private Duration startDrain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        node.setDrain(new DrainState());
        node.setPhase(Phase.Draining);
        node.setStepStartedAt(Timestamps.format(now));
        events.normal(upgrade, "Draining", "Draining node " + node.getName() + ".");
        return drain(upgrade, node, now);
    }

    private Duration drain(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        DrainOptions options = DrainOptions.effective(upgrade.getSpec().getDrain(), settings.drain());
        DrainResult result = drainer.step(node.getName(), options, node.getDrain(), Timestamps.parse(status.getDeadline()), now);
        node.setDrain(result.state());
        boolean blocked = result.report() != null && !result.report().isBlank();
        metrics.drainBlocked(KIND, name(upgrade), node.getName(), blocked && result.outcome() != DrainResult.Outcome.DONE);
        switch (result.outcome()) {
            case IN_PROGRESS -> {
                int attempt = Objects.requireNonNullElse(result.state().getAttempt(), 1);
                progressing(upgrade, "Draining", "draining " + node.getName() + " (attempt " + attempt + "/"
                        + options.attempts() + ")" + (blocked ? ": " + firstLine(result.report()) : ""), now);
                return result.nextCheckAt() == null ? NEXT_STEP : UpgradeProgress.until(result.nextCheckAt(), now).plus(NEXT_STEP);
            }
            case DONE -> {
                stepDone(node, "drain", now);
                node.setPhase(Phase.Upgrading);
                events.normal(upgrade, "Drained", "Node " + node.getName() + " is drained.");
                return NEXT_STEP;
            }
            default -> {
                return failNode(upgrade, node, "The drain of node " + node.getName() + " did not finish: " + result.report(), now);
            }
        }
    }

    private Duration upgradeStep(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        NodeUpgradeSpec spec = upgrade.getSpec();
        String namespace = settings.namespace();
        String jobName = UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), upgrade.getStatus().getRetryToken());
        Job job = client.batch().v1().jobs().inNamespace(namespace).withName(jobName).get();
        if (job == null) {
            if (node.getJobName() != null && node.getJobName().equals(jobName) && node.getStepStartedAt() != null
                    && Duration.between(Timestamps.parse(node.getStepStartedAt()), now).getSeconds() > spec.getExecutor().getJobTimeoutSeconds()
                            + UpgradeJob.TTL_SECONDS_AFTER_FINISHED) {
                return failNode(upgrade, node, "The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName()
                        + " is gone and its outcome unknown; check the node, then retry the NodeUpgrade.", now);
            }
            return createJob(upgrade, node, namespace, now);
        }
        UpgradeJob.Outcome outcome = UpgradeJob.outcome(job);
        if (outcome instanceof UpgradeJob.Running) {
            progressing(upgrade, "Upgrading", "upgrading " + node.getName() + " (" + node.getAction() + ", Job " + jobName + ")", now);
            return RECHECK;
        }
        if (node.getIsoId() != null) {
            // Detached whether the Job worked or not: a VM keeps no CD-ROM of ours.
            isoExecutor.detach(node.getVmId());
            node.setIsoId(null);
        }
        if (outcome instanceof UpgradeJob.Failed failed) {
            String message = UpgradeJob.failureMessage(namespace, jobName, node.getName(), failed, logOf(namespace, jobName));
            return failNode(upgrade, node, message, now);
        }
        stepDone(node, "upgrade", now);
        node.setPhase(Phase.WaitingReady);
        node.setReadyBy(Timestamps.format(now.plusSeconds(spec.getReadyTimeoutSeconds())));
        events.normal(upgrade, "WaitingReady", "The upgrade Job of node " + node.getName() + " succeeded; waiting until it is Ready at "
                + spec.getTargetVersion() + ".");
        return awaitReady(upgrade, node, now);
    }

    private Duration createJob(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace, Instant now) {
        NodeUpgradeSpec spec = upgrade.getSpec();
        UpgradeExecutor executor = spec.getExecutor();
        String configMap;
        String key;
        List<String> arguments;
        if (executor.getType() == UpgradeExecutor.Type.CloudStackIso) {
            KubernetesCluster cluster = isoCluster(upgrade, node);
            if (cluster == null) {
                return null;
            }
            CloudStackIsoExecutor.Attachment attachment;
            try {
                attachment = isoExecutor.attach(cluster, node.getName(),
                        executor.getCloudStackIso() == null ? null : executor.getCloudStackIso().getKubernetesVersionId(), spec.getTargetVersion());
            } catch (CloudStackIsoExecutor.Refused refused) {
                return failNode(upgrade, node, refused.getMessage(), now);
            }
            node.setVmId(attachment.vmId());
            node.setIsoId(attachment.isoId());
            events.normal(upgrade, "IsoAttached", "Attached ISO " + attachment.isoId() + " to VM " + attachment.vmId() + " of node " + node.getName() + ".");
            isoExecutor.ensureScript(namespace);
            configMap = CloudStackIsoExecutor.SCRIPT_CONFIGMAP;
            key = CloudStackIsoExecutor.SCRIPT_KEY;
            arguments = CloudStackIsoExecutor.arguments(spec.getTargetVersion(), node.getAction());
        } else {
            configMap = executor.getScript().getConfigMapRef().getName();
            key = executor.getScript().getConfigMapRef().getKey();
            arguments = List.of(spec.getTargetVersion(), node.getAction() == Action.Apply ? "apply" : "node");
        }
        String image = executor.getImage() == null || executor.getImage().isBlank() ? settings.upgrade().jobImage() : executor.getImage();
        Job job = UpgradeJob.build(new UpgradeJob.Request(namespace, name(upgrade), upgrade.getMetadata().getUid(), node.getName(),
                upgrade.getStatus().getRetryToken(), node.getAction(), spec.getTargetVersion(), image, executor.getJobTimeoutSeconds(),
                configMap, key, arguments));
        try {
            client.batch().v1().jobs().inNamespace(namespace).resource(job).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            // Created by a run that stopped before recording it: the name says it is ours.
        }
        node.setJobName(job.getMetadata().getName());
        node.setStepStartedAt(Timestamps.format(now));
        events.normal(upgrade, "Upgrading", "Started upgrade Job " + namespace + "/" + job.getMetadata().getName() + " on node " + node.getName()
                + " (" + (node.getAction() == Action.Apply ? "kubeadm upgrade apply" : "kubeadm upgrade node") + ").");
        progressing(upgrade, "Upgrading", "upgrading " + node.getName() + " (" + node.getAction() + ", Job " + job.getMetadata().getName() + ")", now);
        return RECHECK;
    }

    private Duration awaitReady(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        String target = upgrade.getSpec().getTargetVersion();
        Node current = nodes.get(new ResourceID(node.getName())).orElse(null);
        UpgradeProgress.ReadyWait wait = UpgradeProgress.readyWait(current, node.getName(), target, Timestamps.parse(node.getReadyBy()), now);
        if (wait instanceof UpgradeProgress.ReadyTimedOut timedOut) {
            return failNode(upgrade, node, timedOut.message(), now);
        }
        if (wait instanceof UpgradeProgress.KeepWaiting keepWaiting) {
            progressing(upgrade, "WaitingReady", "waiting for " + node.getName() + " to be Ready at " + target, now);
            // The Node informer wakes us on every change; the reschedule only catches the timeout.
            return keepWaiting.until() == null ? RECHECK : UpgradeProgress.until(keepWaiting.until(), now).plus(NEXT_STEP);
        }
        stepDone(node, "ready", now);
        node.setVersion(((UpgradeProgress.ReadyAtTarget) wait).version());
        if (Boolean.TRUE.equals(node.getCordonedByUs())) {
            cordons.uncordon(node.getName(), owner(upgrade));
        }
        locks.release(node.getName(), owner(upgrade));
        node.setPhase(Phase.Succeeded);
        node.setCompletedAt(Timestamps.format(now));
        node.setError(null);
        Instant started = Timestamps.parse(node.getStartedAt());
        if (started != null) {
            metrics.nodeStep(KIND, "node", Duration.between(started, now));
        }
        upgrade.getStatus().setProgress(UpgradeProgress.progress(upgrade.getStatus().getNodes()));
        events.normal(upgrade, "NodeUpgraded", "Node " + node.getName() + " is Ready at " + node.getVersion() + " (was " + node.getFromVersion() + ")"
                + (Boolean.TRUE.equals(node.getCordonedByUs()) ? " and uncordoned." : "; it was cordoned before, so it stays cordoned."));
        return NEXT_STEP;
    }

    /** The node failed: uncordon it unless it was cordoned before, release it, detach the ISO, and stop the upgrade. */
    private Duration failNode(NodeUpgrade upgrade, UpgradeNodeStatus node, String error, Instant now) {
        if (node.getIsoId() != null && node.getVmId() != null) {
            isoExecutor.detach(node.getVmId());
            node.setIsoId(null);
        }
        if (Boolean.TRUE.equals(node.getCordonedByUs())) {
            cordons.uncordon(node.getName(), owner(upgrade));
        }
        locks.release(node.getName(), owner(upgrade));
        metrics.drainBlocked(KIND, name(upgrade), node.getName(), false);
        node.setPhase(Phase.Failed);
        node.setError(BlockedByReport.tail(error));
        node.setCompletedAt(Timestamps.format(now));
        return failOperation(upgrade, node.getName(), error, now);
    }

    private Duration failOperation(NodeUpgrade upgrade, String nodeName, String error, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        long generation = upgrade.getMetadata().getGeneration();
        String message = (nodeName == null ? "NodeUpgrade " + name(upgrade) + " failed: " : "NodeUpgrade " + name(upgrade) + " failed at node " + nodeName + ": ")
                + error + (error.contains("retry") ? "" : " Retry with: kubectl annotate nu " + name(upgrade) + " " + NodeAnnotations.RETRY + "=$(date +%s) --overwrite");
        status.setPhase(NodeUpgradeStatus.Phase.Failed);
        status.setCompletedAt(Timestamps.format(now));
        status.setMessage(firstLine(message));
        Conditions.set(status.getConditions(), Conditions.FAILED, true, nodeName == null ? "Refused" : "NodeFailed", message, generation, now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "Failed", firstLine(message), generation, now);
        Conditions.set(status.getConditions(), Conditions.WAITING, false, "Failed", "The upgrade stopped.", generation, now);
        events.warning(upgrade, "Failed", message);
        metrics.finished(KIND, "Failed");
        return null;
    }

    private Duration succeed(NodeUpgrade upgrade, String message, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        long generation = upgrade.getMetadata().getGeneration();
        status.setPhase(NodeUpgradeStatus.Phase.Succeeded);
        status.setCompletedAt(Timestamps.format(now));
        status.setCurrentNode(null);
        status.setMessage(message);
        status.setProgress(UpgradeProgress.progress(status.getNodes()));
        Conditions.set(status.getConditions(), Conditions.SUCCEEDED, true, "AllNodesUpgraded", message, generation, now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "Succeeded", message, generation, now);
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        events.normal(upgrade, "Succeeded", "NodeUpgrade " + name(upgrade) + ": " + message);
        metrics.finished(KIND, "Succeeded");
        return null;
    }

    private Duration waitFor(NodeUpgrade upgrade, String reason, String message, Instant now, Duration recheck) {
        NodeUpgradeStatus status = upgrade.getStatus();
        if (status.getPhase() != NodeUpgradeStatus.Phase.Waiting) {
            events.normal(upgrade, reason, message);
        }
        status.setPhase(NodeUpgradeStatus.Phase.Waiting);
        status.setMessage(message);
        Conditions.set(status.getConditions(), Conditions.WAITING, true, reason, message, upgrade.getMetadata().getGeneration(), now);
        return recheck;
    }

    private KubernetesCluster isoCluster(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        NodeUpgradeStatus status = upgrade.getStatus();
        try {
            KubernetesCluster cluster = isoExecutor.cluster(status.getClusterId(),
                    status.getNodes().stream().map(UpgradeNodeStatus::getName).toList());
            status.setClusterId(cluster.id());
            return cluster;
        } catch (CloudStackIsoExecutor.Refused | IllegalArgumentException refused) {
            failNode(upgrade, node, refused.getMessage(), clock.instant());
            return null;
        }
    }

    private void progressing(NodeUpgrade upgrade, String reason, String message, Instant now) {
        upgrade.getStatus().setMessage(message);
        Conditions.set(upgrade.getStatus().getConditions(), Conditions.PROGRESSING, true, reason, message, upgrade.getMetadata().getGeneration(), now);
    }

    private void stepDone(UpgradeNodeStatus node, String step, Instant now) {
        Instant started = Timestamps.parse(node.getStepStartedAt());
        if (started != null) {
            metrics.nodeStep(KIND, step, Duration.between(started, now));
        }
        node.setStepStartedAt(Timestamps.format(now));
    }

    /** The end of the log of the Job's pod; empty when there is none (or it can't be read: the Job's reason still says why). */
    private String logOf(String namespace, String jobName) {
        try {
            List<Pod> pods = client.pods().inNamespace(namespace).withLabel("job-name", jobName).list().getItems();
            Optional<Pod> newest = pods.stream().max(Comparator.comparing(p -> p.getMetadata().getCreationTimestamp()));
            if (newest.isEmpty()) {
                return "";
            }
            String log = client.pods().inNamespace(namespace).withName(newest.get().getMetadata().getName()).tailingLines(60).getLog();
            return log == null ? "" : log;
        } catch (KubernetesClientException e) {
            LOG.debugf("no log for Job %s/%s: %s", namespace, jobName, e.getMessage());
            return "";
        }
    }

    /**
     * Deleting a NodeUpgrade mid-operation must not strand nodes: what we cordoned is uncordoned and our
     * locks released. A node whose upgrade is running is only released: uncordoning it while kubeadm
     * works on it would let pods land on a node about to restart its kubelet.
     */
    @Override
    public DeleteControl cleanup(NodeUpgrade upgrade, Context<NodeUpgrade> context) {
        List<UpgradeNodeStatus> planned = upgrade.getStatus() == null ? List.of() : upgrade.getStatus().getNodes();
        for (UpgradeNodeStatus node : planned) {
            if (node.getPhase() == Phase.Succeeded || node.getPhase() == Phase.Skipped) {
                continue;
            }
            boolean midUpgrade = node.getPhase() == Phase.Upgrading || node.getPhase() == Phase.WaitingReady;
            if (midUpgrade) {
                events.warning(upgrade, "LeftCordoned", "NodeUpgrade " + name(upgrade) + " was deleted while node " + node.getName()
                        + " was being upgraded; the node is released but stays cordoned. Uncordon it (kubectl uncordon "
                        + node.getName() + ") once it is healthy.");
            } else if (cordons.uncordon(node.getName(), owner(upgrade))) {
                events.normal(upgrade, "Uncordoned", "Uncordoned node " + node.getName() + " because NodeUpgrade " + name(upgrade) + " was deleted.");
            }
            if (node.getIsoId() != null && node.getVmId() != null && !midUpgrade) {
                isoExecutor.detach(node.getVmId());
            }
            locks.release(node.getName(), owner(upgrade));
        }
        metrics.forget(KIND, name(upgrade));
        return DeleteControl.defaultDelete();
    }

    private static boolean isFinished(NodeUpgradeStatus status) {
        return status.getPhase() == NodeUpgradeStatus.Phase.Succeeded || status.getPhase() == NodeUpgradeStatus.Phase.Failed;
    }

    static String owner(NodeUpgrade upgrade) {
        return NodeLock.owner(KIND, name(upgrade));
    }

    private static String name(NodeUpgrade upgrade) {
        return upgrade.getMetadata().getName();
    }

    private static String annotation(NodeUpgrade upgrade, String key) {
        Map<String, String> annotations = upgrade.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(key);
    }

    private static String firstLine(String text) {
        return text == null ? "" : text.lines().findFirst().orElse("");
    }
}
