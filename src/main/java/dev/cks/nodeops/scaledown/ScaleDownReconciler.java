package dev.cks.nodeops.scaledown;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.jboss.logging.Logger;

import dev.cks.nodeops.cloudstack.AsyncJobResult;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
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
import dev.cks.nodeops.drain.PodFilters;
import dev.cks.nodeops.drain.PodVerdict;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.nodes.CordonRecord;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * Removes worker nodes as cluster-autoscaler's scale-down does: cordon every node first (so pods evicted
 * from one are not rescheduled onto another that is going away too), drain them one by one, and only
 * when all are drained remove them through CloudStack; any failure before that puts back what this
 * ScaleDown changed. Each reconcile advances one step and keeps everything in status, so a restarted
 * operator carries on where the last one stopped.
 */
@ControllerConfiguration(name = "scaledown")
public class ScaleDownReconciler implements Reconciler<ScaleDown>, Cleaner<ScaleDown> {
    static final String KIND = "ScaleDown";
    static final String PREFLIGHT_CONDITION = "PreflightPredictsBlock";
    /** How often a ScaleDown waiting for CloudStack (busy cluster, unreachable API) looks again. */
    static final Duration RECHECK_CLOUDSTACK = Duration.ofSeconds(10);
    static final Duration POLL_REMOVAL_JOB = Duration.ofSeconds(2);
    /** The next step is due now; status is patched in between so a restart resumes there. */
    static final Duration NEXT_STEP = Duration.ofMillis(200);
    private static final Logger LOG = Logger.getLogger(ScaleDownReconciler.class);

    private final KubernetesClient client;
    private final Clock clock;
    private final CloudStackAccess cloudStack;
    private final EventRecorder events;
    private final OperationMetrics metrics;
    private final OperatorSettings settings;
    private final Cordon cordon;
    private final NodeLock locks;
    private final NodeDrainer drainer;
    private final DrainPreflight preflight;

    public ScaleDownReconciler(KubernetesClient client, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings) {
        this.client = client;
        this.clock = clock;
        this.cloudStack = cloudStack;
        this.events = events;
        this.metrics = metrics;
        this.settings = settings;
        this.cordon = new Cordon(client);
        this.locks = new NodeLock(client);
        KubernetesClient drainClient = DrainClient.from(client);
        this.drainer = new NodeDrainer(drainClient, result -> metrics.evictionAnswered("ScaleDown", result));
        this.preflight = new DrainPreflight(drainClient);
    }

    /** The outcome of one step: reschedule after this long, or null when the operation has finished. */
    private record Next(Duration after) {
        static final Next FINISHED = new Next(null);
    }

    @Override
    public UpdateControl<ScaleDown> reconcile(ScaleDown resource, Context<ScaleDown> context) throws Exception {
        ScaleDownStatus status = resource.getStatus() == null ? new ScaleDownStatus() : resource.getStatus();
        resource.setStatus(status);
        if (isFinished(status.getPhase())) {
            return UpdateControl.noUpdate();
        }
        long generation = resource.getMetadata().getGeneration();
        Instant now = clock.instant();
        status.setObservedGeneration(generation);
        List<String> problems = ScaleDownValidation.problems(resource.getSpec());
        Next next;
        if (!problems.isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "InvalidSpec", String.join("; ", problems), generation, now);
            status.setPhase(ScaleDownStatus.Phase.Failed);
            status.setMessage(String.join("; ", problems));
            next = Next.FINISHED;
        } else {
            ScaleDownStatus.Phase phase = status.getPhase() == null ? ScaleDownStatus.Phase.Pending : status.getPhase();
            next = switch (phase) {
                case Pending, Waiting -> plan(resource, now);
                case Cordoning -> cordonAll(resource, now);
                case Draining -> drainStep(resource, now);
                case Removing -> removeStep(resource, now);
                case Succeeded, RolledBack, Failed -> Next.FINISHED;
            };
        }
        metrics.phase(KIND, resource.getMetadata().getName(), status.getPhase().name());
        if (isFinished(status.getPhase())) {
            metrics.finished(KIND, status.getPhase().name());
        }
        return next.after() == null ? UpdateControl.patchStatus(resource) : UpdateControl.patchStatus(resource).rescheduleAfter(next.after());
    }

    /** Deleting a ScaleDown half-way leaves no node cordoned or locked by it; once removal was asked for, nothing is undone. */
    @Override
    public DeleteControl cleanup(ScaleDown resource, Context<ScaleDown> context) {
        ScaleDownStatus status = resource.getStatus();
        String name = resource.getMetadata().getName();
        if (status != null && status.getRemoval() == null && !isFinished(status.getPhase())) {
            String owner = owner(resource);
            ScaleDownSteps.toUncordon(status.getNodes(), Set.of()).forEach(n -> cordon.uncordon(n.getName(), owner));
            targetNames(status).forEach(n -> locks.release(n, owner));
            LOG.infof("ScaleDown %s deleted before removal: uncordoned the nodes it cordoned and released its locks", name);
        }
        metrics.forget(KIND, name);
        return DeleteControl.defaultDelete();
    }

    // ---- Planning: pick, check, lock ---------------------------------------------------------

    private Next plan(ScaleDown resource, Instant now) throws InterruptedException {
        ScaleDownStatus status = resource.getStatus();
        ScaleDownSpec spec = resource.getSpec();
        String owner = owner(resource);
        Map<String, Node> nodesByName = client.nodes().list().getItems().stream()
                .collect(Collectors.toMap(n -> n.getMetadata().getName(), Function.identity(), (a, b) -> a, LinkedHashMap::new));

        KubernetesCluster cluster;
        try {
            CloudStackAccess.ClusterResolution resolution = cloudStack.resolveCluster(status.getClusterId(), nodesByName.keySet());
            if (resolution.cluster().isEmpty()) {
                return refuse(resource, List.of("The CloudStack Kubernetes cluster of these nodes could not be determined: "
                        + resolution.refusal() + "."), List.of(), now);
            }
            cluster = resolution.cluster().get();
        } catch (IllegalArgumentException | CloudStackException e) {
            return waitFor(resource, "CloudStackUnavailable", "CloudStack could not be asked about the cluster (" + e.getMessage()
                    + "); the scale-down has not touched any node and tries again in " + RECHECK_CLOUDSTACK.toSeconds() + "s.", now);
        }
        status.setClusterId(cluster.id());
        if (CloudStackAccess.isBusy(cluster)) {
            return waitFor(resource, "CloudStackBusy", "CloudStack Kubernetes cluster " + cluster.name() + " is " + cluster.state()
                    + "; the scale-down waits until CloudStack has finished and looks again every " + RECHECK_CLOUDSTACK.toSeconds() + "s.", now);
        }

        DrainOptions drainOptions = drainOptions(spec);
        List<String> targets;
        if (status.getTargetNodes() != null && !status.getTargetNodes().isBlank()) {
            // Picked before a restart (and maybe locked): keep the same nodes.
            targets = Arrays.asList(status.getTargetNodes().split(","));
        } else if (spec.getNodeNames() != null && !spec.getNodeNames().isEmpty()) {
            targets = List.copyOf(spec.getNodeNames());
        } else {
            Optional<List<String>> picked = pickByCount(spec.getCount(), nodesByName, cluster, owner, drainOptions, now);
            if (picked.isEmpty()) {
                return refuse(resource, List.of("spec.count is " + spec.getCount() + " but fewer Ready, schedulable workers of CloudStack "
                        + "Kubernetes cluster " + cluster.name() + " are free to remove; lower spec.count or free more workers."), List.of(), now);
            }
            targets = picked.get();
        }

        List<String> refusals = new ArrayList<>(ScaleDownTargets.refusals(targets, nodesByName, owner));
        refusals.addAll(ScaleDownTargets.cloudStackRefusals(targets, cluster, spec.getRemoval()));
        if (!refusals.isEmpty()) {
            return refuse(resource, refusals, targets, now);
        }

        List<ScaleDownNodeStatus> nodes = new ArrayList<>();
        for (String target : targets) {
            Optional<VirtualMachine> vm = ScaleDownTargets.vmOf(target, cluster);
            ScaleDownNodeStatus node = new ScaleDownNodeStatus();
            node.setName(target);
            node.setRole(NodeRole.Worker);
            node.setVmId(vm.map(VirtualMachine::id).orElse(null));
            node.setPhase(Phase.Pending);
            node.setDownReason(ScaleDownTargets.downReason(nodesByName.get(target), vm).orElse(null));
            nodes.add(node);
        }
        List<String> upNodes = nodes.stream().filter(n -> n.getDownReason() == null).map(ScaleDownNodeStatus::getName).toList();

        if (spec.getPreflight() != Preflight.Skip && !upNodes.isEmpty()) {
            PreflightPrediction.Report prediction;
            try {
                prediction = preflight.check(upNodes, drainOptions, now);
            } catch (IllegalArgumentException invalidSelector) {
                return refuse(resource, List.of(invalidSelector.getMessage()), targets, now);
            }
            if (prediction.predictsBlock()) {
                if (spec.getPreflight() == Preflight.Fail) {
                    return refuse(resource, List.of(prediction.describe() + "\nNothing was cordoned. Free the budgets (or set spec.preflight: Warn "
                            + "to try anyway) and create the ScaleDown again."), targets, now);
                }
                Conditions.set(status.getConditions(), PREFLIGHT_CONDITION, true, "BlockPredicted", prediction.describe(), generation(resource), now);
                events.warning(resource, "PreflightPredictsBlock", prediction.describe() + "\nspec.preflight is Warn: the scale-down goes on.");
            } else {
                Conditions.set(status.getConditions(), PREFLIGHT_CONDITION, false, "NoBlockPredicted", prediction.describe(), generation(resource), now);
            }
        }

        // The picked nodes are recorded before they are locked, so a restart in between releases or keeps exactly these.
        status.setTargetNodes(String.join(",", targets));
        persistNow(resource);
        for (String target : targets) {
            NodeLock.Outcome outcome = locks.acquire(target, owner);
            if (outcome instanceof NodeLock.HeldBy held) {
                return refuse(resource, List.of("Node " + target + " was locked by " + held.owner()
                        + " while this ScaleDown started; wait until that operation has finished, then create this ScaleDown again."), targets, now);
            }
            if (outcome instanceof NodeLock.NodeMissing) {
                return refuse(resource, List.of("Node " + target + " was deleted while this ScaleDown started; remove it from spec.nodeNames."), targets, now);
            }
        }

        status.setNodes(nodes);
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds() == null ? 1800 : spec.getTimeoutSeconds())));
        status.setProgress(ScaleDownSteps.progress(nodes));
        String accepted = "Removing " + nodes.size() + " node(s) from CloudStack Kubernetes cluster " + cluster.name() + ": "
                + String.join(", ", targets) + " (deadline for the drains " + status.getDeadline() + ").";
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Planned", accepted, generation(resource), now);
        progressing(resource, "Cordoning", "Cordoning every node before draining any.", now);
        status.setPhase(ScaleDownStatus.Phase.Cordoning);
        status.setMessage(accepted);
        events.normal(resource, "Accepted", accepted);
        return new Next(NEXT_STEP);
    }

    private Optional<List<String>> pickByCount(int count, Map<String, Node> nodesByName, KubernetesCluster cluster, String owner,
            DrainOptions drainOptions, Instant now) {
        PodFilters filters = PodFilters.forOptions(drainOptions, now);
        Map<String, Integer> evictable = new LinkedHashMap<>();
        for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
            String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
            if (node != null && pod.getMetadata().getDeletionTimestamp() == null && filters.verdict(pod).action() == PodVerdict.Action.EVICT) {
                evictable.merge(node, 1, Integer::sum);
            }
        }
        List<ScaleDownTargets.Candidate> candidates = nodesByName.values().stream()
                .filter(node -> ScaleDownTargets.isCandidate(node, cluster, owner))
                .map(node -> new ScaleDownTargets.Candidate(node.getMetadata().getName(),
                        evictable.getOrDefault(node.getMetadata().getName(), 0), ScaleDownTargets.createdAt(node)))
                .toList();
        List<String> picked = ScaleDownTargets.fewestPods(count, candidates);
        return picked.size() < count ? Optional.empty() : Optional.of(picked);
    }

    // ---- Cordon all, then drain one by one ------------------------------------------------------

    private Next cordonAll(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = owner(resource);
        for (ScaleDownNodeStatus node : status.getNodes()) {
            if (node.getPhase() != Phase.Pending) {
                continue;
            }
            if (node.getDownReason() != null) {
                node.setPhase(Phase.SkippedDown);
                events.normal(resource, "SkippedDown", "Node " + node.getName() + " is down (" + node.getDownReason()
                        + "): it is neither cordoned nor drained, and will be removed with the others.");
                continue;
            }
            CordonRecord record;
            try {
                record = cordon.cordon(node.getName(), owner);
            } catch (KubernetesClientException e) {
                return rollBack(resource, node, "CordonFailed", "Node " + node.getName() + " could not be cordoned: " + e.getMessage(), now);
            }
            if (!record.unschedulable()) {
                return rollBack(resource, node, "CordonFailed", "Node " + node.getName() + " could not be cordoned: " + record.note(), now);
            }
            node.setCordonedByUs(record.cordonedByUs());
            node.setCordonedAt(Timestamps.format(now));
            node.setPhase(Phase.Cordoned);
            events.normal(resource, "Cordoned", record.cordonedByUs() ? "Cordoned node " + node.getName() + "."
                    : record.note());
        }
        status.setPhase(ScaleDownStatus.Phase.Draining);
        progressing(resource, "Draining", "Every node is cordoned; draining them one by one.", now);
        return new Next(NEXT_STEP);
    }

    private Next drainStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String name = resource.getMetadata().getName();
        Optional<ScaleDownNodeStatus> next = ScaleDownSteps.nextToDrain(status.getNodes());
        if (next.isEmpty()) {
            status.setPhase(ScaleDownStatus.Phase.Removing);
            status.setCurrentNode(null);
            progressing(resource, "Removing", "Every node is drained; removing them (" + resource.getSpec().getRemoval()
                    + "). Removal runs to the end even past the deadline.", now);
            events.normal(resource, "Drained", "Every node is drained: " + status.getTargetNodes() + ".");
            return new Next(NEXT_STEP);
        }
        ScaleDownNodeStatus node = next.get();
        Instant deadline = Timestamps.parse(status.getDeadline());
        if (deadline != null && !now.isBefore(deadline)) {
            return rollBack(resource, node, "DeadlinePassed", "The deadline " + status.getDeadline() + " (spec.timeoutSeconds) passed while node "
                    + node.getName() + " was " + (node.getPhase() == Phase.Draining ? "draining" : "waiting to be drained")
                    + (node.getDrain() != null && node.getDrain().getBlockedBy() != null ? ":\n" + node.getDrain().getBlockedBy() : "."), now);
        }
        if (node.getPhase() == Phase.Cordoned) {
            // Don't fight CloudStack: before each node, make sure it is not changing the cluster itself.
            Optional<Next> waiting = waitWhileCloudStackIsBusy(resource, now);
            if (waiting.isPresent()) {
                return waiting.get();
            }
            node.setPhase(Phase.Draining);
            node.setStartedAt(Timestamps.format(now));
            node.setDrain(new DrainState());
            events.normal(resource, "Draining", "Draining node " + node.getName() + ".");
        }
        status.setCurrentNode(node.getName());
        DrainOptions options = drainOptions(resource.getSpec());
        DrainResult result = drainer.step(node.getName(), options, node.getDrain(), deadline, now);
        node.setDrain(result.state());
        switch (result.outcome()) {
            case DONE -> {
                node.setPhase(Phase.Drained);
                node.setCompletedAt(Timestamps.format(now));
                metrics.drainBlocked(KIND, name, node.getName(), false);
                Instant started = Timestamps.parse(node.getStartedAt());
                if (started != null) {
                    metrics.nodeStep(KIND, "drain", Duration.between(started, now));
                }
                status.setProgress(ScaleDownSteps.progress(status.getNodes()));
                events.normal(resource, "NodeDrained", "Drained node " + node.getName() + ".");
                return new Next(NEXT_STEP);
            }
            case IN_PROGRESS -> {
                String blockedBy = result.state().getBlockedBy();
                metrics.drainBlocked(KIND, name, node.getName(), blockedBy != null && blockedBy.contains("pdb "));
                Conditions.remove(status.getConditions(), Conditions.WAITING);
                progressing(resource, "Draining", "Draining node " + node.getName() + " (attempt " + result.state().getAttempt() + "/"
                        + options.attempts() + ")" + (result.podsRemaining() > 0 ? ", " + result.podsRemaining() + " pod(s) to go" : "") + ".", now);
                Duration wait = result.nextCheckAt() == null ? NEXT_STEP : Duration.between(now, result.nextCheckAt());
                return new Next(wait.compareTo(NEXT_STEP) < 0 ? NEXT_STEP : wait);
            }
            default -> {
                node.setPhase(Phase.Failed);
                node.setError(BlockedByReport.tail(result.report()));
                return rollBack(resource, node, "DrainBlocked", "Node " + node.getName() + " could not be drained:\n" + result.report(), now);
            }
        }
    }

    /** Puts back what this ScaleDown changed before removal: uncordon what it cordoned, release its locks, remove nothing. */
    private Next rollBack(ScaleDown resource, ScaleDownNodeStatus failed, String reason, String why, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = owner(resource);
        List<String> uncordoned = new ArrayList<>();
        for (ScaleDownNodeStatus node : ScaleDownSteps.toUncordon(status.getNodes(), Set.of())) {
            if (cordon.uncordon(node.getName(), owner)) {
                uncordoned.add(node.getName());
            }
            if (node.getPhase() != Phase.Failed) {
                node.setPhase(Phase.Uncordoned);
            }
        }
        targetNames(status).forEach(n -> locks.release(n, owner));
        status.getNodes().forEach(n -> metrics.drainBlocked(KIND, resource.getMetadata().getName(), n.getName(), false));
        String message = "Rolled back because of node " + failed.getName() + ": " + why + "\nNothing was removed; "
                + (uncordoned.isEmpty() ? "no node needed uncordoning" : "uncordoned " + String.join(", ", uncordoned))
                + ". Fix what blocks, then create a new ScaleDown.";
        status.setPhase(ScaleDownStatus.Phase.RolledBack);
        status.setCurrentNode(null);
        status.setCompletedAt(Timestamps.format(now));
        status.setMessage(firstLine(why));
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        Conditions.set(status.getConditions(), Conditions.ROLLED_BACK, true, reason, message, generation(resource), now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "RolledBack", firstLine(why), generation(resource), now);
        events.warning(resource, "RolledBack", message);
        return Next.FINISHED;
    }

    // ---- Removal --------------------------------------------------------------------------------

    private Next removeStep(ScaleDown resource, Instant now) {
        try {
            return resource.getSpec().getRemoval() == ScaleDownSpec.Removal.DestroyVM ? destroyStep(resource, now) : scaleStep(resource, now);
        } catch (IllegalArgumentException e) {
            // The Secret went away or broke mid-way: removal must still finish, so wait for it to be fixed.
            Conditions.set(resource.getStatus().getConditions(), Conditions.WAITING, true, "CloudStackUnavailable",
                    "The nodes are drained but CloudStack cannot be reached (" + e.getMessage() + "); removal goes on once it can.", generation(resource), now);
            return new Next(RECHECK_CLOUDSTACK);
        }
    }

    /** Removal begins: recorded and saved before anything is asked of CloudStack. */
    private RemovalStatus recordRemovalStart(ScaleDown resource, List<String> vmIds, Instant now) {
        RemovalStatus removal = new RemovalStatus();
        removal.setStartedAt(Timestamps.format(now));
        removal.setRemainingVmIds(new ArrayList<>(vmIds));
        resource.getStatus().setRemoval(removal);
        persistNow(resource);
        return removal;
    }

    private Next scaleStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        CloudStackClient cs = cloudStack.client();
        RemovalStatus removal = status.getRemoval();
        if (removal == null) {
            // Persist before act: a restart from here on never calls scaleKubernetesCluster a second time.
            removal = recordRemovalStart(resource, vmIds, now);
            events.normal(resource, "RemovalRequested", "Asking CloudStack to remove VMs " + String.join(", ", vmIds)
                    + " from Kubernetes cluster " + status.getClusterId() + " (scaleKubernetesCluster).");
            try {
                removal.setJobId(cs.startScaleKubernetesCluster(status.getClusterId(), vmIds));
            } catch (CloudStackException e) {
                return removalFailed(resource, "CloudStack refused scaleKubernetesCluster: " + e.getMessage(), vmIds, now);
            }
            persistNow(resource);
            return new Next(POLL_REMOVAL_JOB);
        }
        if (removal.getJobId() == null) {
            // The operator stopped between asking and hearing the job id: look instead of asking again.
            KubernetesCluster cluster = cs.findKubernetesCluster(status.getClusterId()).orElse(null);
            return switch (ScaleDownSteps.removalSeen(cluster, vmIds)) {
                case DONE -> removalSucceeded(resource, now);
                case IN_PROGRESS -> new Next(POLL_REMOVAL_JOB);
                case NOT_STARTED -> removalFailed(resource, "Removal was requested from CloudStack, but the operator stopped before CloudStack "
                        + "answered and CloudStack shows no scale of the cluster; to be safe it is not asked again. Check the cluster's "
                        + "async jobs in CloudStack, then create a new ScaleDown for the nodes still there.", vmIds, now);
            };
        }
        AsyncJobResult job;
        try {
            job = cs.queryAsyncJob(removal.getJobId());
        } catch (CloudStackException e) {
            Conditions.set(status.getConditions(), Conditions.WAITING, true, "CloudStackUnavailable", "Could not ask CloudStack about job "
                    + removal.getJobId() + " (" + e.getMessage() + "); asking again.", generation(resource), now);
            return new Next(RECHECK_CLOUDSTACK);
        }
        if (job.isPending()) {
            progressing(resource, "Removing", "Waiting for CloudStack job " + removal.getJobId() + " (scaleKubernetesCluster).", now);
            return new Next(POLL_REMOVAL_JOB);
        }
        if (job.succeeded()) {
            return removalSucceeded(resource, now);
        }
        CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
        return removalFailed(resource, "CloudStack job " + removal.getJobId() + " (scaleKubernetesCluster) failed: " + error.errorText()
                + " (error " + error.errorCode() + ").", vmIds, now);
    }

    /**
     * DestroyVM, one node at a time: delete the Node, start destroying its VM and record the job, poll it
     * in later reconciles; each VM's removal is recorded before the next begins.
     */
    private Next destroyStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        CloudStackClient cs = cloudStack.client();
        RemovalStatus removal = status.getRemoval() != null ? status.getRemoval() : recordRemovalStart(resource, vmIds, now);
        Optional<ScaleDownNodeStatus> next = status.getNodes().stream().filter(n -> n.getPhase() != Phase.Removed).findFirst();
        if (next.isPresent()) {
            ScaleDownNodeStatus node = next.get();
            if (node.getRemovalJobId() == null) {
                // kubectl delete node --ignore-not-found; an API error throws and the reconcile is retried.
                client.nodes().withName(node.getName()).delete();
                try {
                    node.setRemovalJobId(cs.startDestroyVirtualMachine(node.getVmId()));
                } catch (CloudStackException e) {
                    return removalFailed(resource, "CloudStack refused to destroy VM " + node.getVmId() + " of node " + node.getName()
                            + ": " + e.getMessage(), removal.getRemainingVmIds(), now);
                }
                persistNow(resource);
                return new Next(POLL_REMOVAL_JOB);
            }
            AsyncJobResult job;
            try {
                job = cs.queryAsyncJob(node.getRemovalJobId());
            } catch (CloudStackException e) {
                Conditions.set(status.getConditions(), Conditions.WAITING, true, "CloudStackUnavailable", "Could not ask CloudStack about job "
                        + node.getRemovalJobId() + " (" + e.getMessage() + "); asking again.", generation(resource), now);
                return new Next(RECHECK_CLOUDSTACK);
            }
            if (job.isPending()) {
                progressing(resource, "Removing", "Waiting for CloudStack job " + node.getRemovalJobId() + " destroying VM "
                        + node.getVmId() + " of node " + node.getName() + ".", now);
                return new Next(POLL_REMOVAL_JOB);
            }
            if (job.failed()) {
                CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
                return removalFailed(resource, "CloudStack job " + node.getRemovalJobId() + " could not destroy VM " + node.getVmId()
                        + " of node " + node.getName() + ": " + error.errorText() + " (error " + error.errorCode() + ").", removal.getRemainingVmIds(), now);
            }
            node.setPhase(Phase.Removed);
            removal.getRemovedVmIds().add(node.getVmId());
            removal.getRemainingVmIds().remove(node.getVmId());
            events.normal(resource, "NodeRemoved", "Deleted node " + node.getName() + " and destroyed its VM " + node.getVmId() + ".");
            return new Next(NEXT_STEP);
        }
        try {
            cs.removeVirtualMachinesFromKubernetesCluster(status.getClusterId(), vmIds);
        } catch (CloudStackException e) {
            return removalFailed(resource, "The VMs are destroyed, but CloudStack did not drop them from the cluster's VM map: " + e.getMessage()
                    + " Remove them with removeVirtualMachinesFromKubernetesCluster.", List.of(), now);
        }
        return removalSucceeded(resource, now);
    }

    private Next removalSucceeded(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        for (ScaleDownNodeStatus node : status.getNodes()) {
            // CloudStack destroyed the VM; the Node object would linger NotReady otherwise.
            client.nodes().withName(node.getName()).delete();
            node.setPhase(Phase.Removed);
        }
        status.getRemoval().setRemovedVmIds(new ArrayList<>(ScaleDownSteps.vmIds(status.getNodes())));
        status.getRemoval().setRemainingVmIds(new ArrayList<>());
        status.setProgress(ScaleDownSteps.progress(status.getNodes()));
        String message = "Removed " + status.getTargetNodes() + " from the cluster and from CloudStack.";
        status.setPhase(ScaleDownStatus.Phase.Succeeded);
        status.setCompletedAt(Timestamps.format(now));
        status.setCurrentNode(null);
        status.setMessage(message);
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        Conditions.set(status.getConditions(), Conditions.SUCCEEDED, true, "Removed", message, generation(resource), now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "Succeeded", message, generation(resource), now);
        events.normal(resource, "Succeeded", message);
        return Next.FINISHED;
    }

    /** Removal failed part way: what is gone is listed, nodes still here that we cordoned are schedulable again. */
    private Next removalFailed(ScaleDown resource, String why, List<String> candidatesRemaining, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = owner(resource);
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        Set<String> stillMapped;
        try {
            stillMapped = cloudStack.client().findKubernetesCluster(status.getClusterId()).map(KubernetesCluster::vmIds).orElse(Set.of());
        } catch (RuntimeException e) {
            // Without CloudStack's view, what we did not see removed counts as remaining: nothing is uncordoned wrongly, as its node still exists.
            stillMapped = new HashSet<>(candidatesRemaining);
        }
        // An ExternalManaged map keeps destroyed VMs until they are dropped: there, what we destroyed is what was removed.
        ScaleDownSteps.RemovalSplit split = resource.getSpec().getRemoval() == ScaleDownSpec.Removal.DestroyVM
                ? ScaleDownSteps.split(vmIds, vmIds.stream().filter(id -> !status.getRemoval().getRemovedVmIds().contains(id)).collect(Collectors.toSet()))
                : ScaleDownSteps.split(vmIds, stillMapped);
        status.getRemoval().setRemovedVmIds(new ArrayList<>(split.removed()));
        status.getRemoval().setRemainingVmIds(new ArrayList<>(split.remaining()));
        List<String> uncordoned = new ArrayList<>();
        for (ScaleDownNodeStatus node : ScaleDownSteps.toUncordon(status.getNodes(), Set.copyOf(split.removed()))) {
            if (cordon.uncordon(node.getName(), owner)) {
                uncordoned.add(node.getName());
            }
            node.setPhase(Phase.Uncordoned);
        }
        status.getNodes().stream().filter(n -> split.removed().contains(n.getVmId())).forEach(n -> n.setPhase(Phase.Removed));
        targetNames(status).forEach(n -> locks.release(n, owner));
        String message = why + "\nRemoved VMs: " + (split.removed().isEmpty() ? "none" : String.join(", ", split.removed()))
                + "; still in the cluster: " + (split.remaining().isEmpty() ? "none" : String.join(", ", split.remaining()))
                + (uncordoned.isEmpty() ? "." : "; uncordoned " + String.join(", ", uncordoned) + ".");
        status.setPhase(ScaleDownStatus.Phase.Failed);
        status.setCompletedAt(Timestamps.format(now));
        status.setCurrentNode(null);
        status.setMessage(firstLine(why));
        Conditions.set(status.getConditions(), Conditions.FAILED, true, "RemovalFailed", message, generation(resource), now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, "Failed", firstLine(why), generation(resource), now);
        events.warning(resource, "RemovalFailed", message);
        return Next.FINISHED;
    }

    // ---- Helpers ---------------------------------------------------------------------------------

    private Optional<Next> waitWhileCloudStackIsBusy(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        try {
            Optional<KubernetesCluster> cluster = cloudStack.client().findKubernetesCluster(status.getClusterId());
            if (cluster.isPresent() && CloudStackAccess.isBusy(cluster.get())) {
                Conditions.set(status.getConditions(), Conditions.WAITING, true, "CloudStackBusy", "CloudStack Kubernetes cluster "
                        + cluster.get().name() + " is " + cluster.get().state() + "; the next node is drained once CloudStack has finished.",
                        generation(resource), now);
                return Optional.of(new Next(RECHECK_CLOUDSTACK));
            }
        } catch (IllegalArgumentException | CloudStackException e) {
            Conditions.set(status.getConditions(), Conditions.WAITING, true, "CloudStackUnavailable", "CloudStack could not be asked about the "
                    + "cluster before draining the next node (" + e.getMessage() + "); asking again.", generation(resource), now);
            return Optional.of(new Next(RECHECK_CLOUDSTACK));
        }
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        return Optional.empty();
    }

    private Next waitFor(ScaleDown resource, String reason, String message, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        status.setPhase(ScaleDownStatus.Phase.Waiting);
        status.setMessage(message);
        if (Conditions.find(status.getConditions(), Conditions.ACCEPTED).isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "The spec is valid; the nodes are checked once CloudStack answers.",
                    generation(resource), now);
        }
        boolean alreadyWaiting = Conditions.find(status.getConditions(), Conditions.WAITING).map(c -> reason.equals(c.getReason())).orElse(false);
        Conditions.set(status.getConditions(), Conditions.WAITING, true, reason, message, generation(resource), now);
        if (!alreadyWaiting) {
            events.normal(resource, "Waiting", message);
        }
        return new Next(RECHECK_CLOUDSTACK);
    }

    /** Refused before anything was cordoned: locks this ScaleDown may have taken are released; nothing else was touched. */
    private Next refuse(ScaleDown resource, List<String> refusals, List<String> targets, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = owner(resource);
        targets.forEach(n -> locks.release(n, owner));
        String message = String.join("\n", refusals);
        status.setPhase(ScaleDownStatus.Phase.Failed);
        status.setCompletedAt(Timestamps.format(now));
        status.setMessage(firstLine(message));
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "Refused", message, generation(resource), now);
        events.warning(resource, "Refused", message);
        return Next.FINISHED;
    }

    private void progressing(ScaleDown resource, String reason, String message, Instant now) {
        Conditions.set(resource.getStatus().getConditions(), Conditions.PROGRESSING, true, reason, message, generation(resource), now);
        resource.getStatus().setMessage(message);
    }

    /**
     * Writes the status now, before a step that must not be repeated after a restart. A merge patch of the
     * status alone, without resourceVersion: only the leader writes a ScaleDown's status, so there is no
     * other writer to conflict with.
     */
    private void persistNow(ScaleDown resource) {
        ScaleDown copy = new ScaleDown();
        copy.setMetadata(new ObjectMetaBuilder().withName(resource.getMetadata().getName()).build());
        copy.setStatus(resource.getStatus());
        ScaleDown patched = client.resource(copy).patchStatus();
        resource.getMetadata().setResourceVersion(patched.getMetadata().getResourceVersion());
    }

    private DrainOptions drainOptions(ScaleDownSpec spec) {
        return DrainOptions.effective(spec.getDrain(), settings.drain());
    }

    private static List<String> targetNames(ScaleDownStatus status) {
        return status.getTargetNodes() == null || status.getTargetNodes().isBlank() ? List.of()
                : Arrays.asList(status.getTargetNodes().split(","));
    }

    private static String owner(ScaleDown resource) {
        return NodeLock.owner(KIND, resource.getMetadata().getName());
    }

    private static long generation(ScaleDown resource) {
        return resource.getMetadata().getGeneration();
    }

    private static boolean isFinished(ScaleDownStatus.Phase phase) {
        return phase == ScaleDownStatus.Phase.Succeeded || phase == ScaleDownStatus.Phase.RolledBack || phase == ScaleDownStatus.Phase.Failed;
    }

    private static String firstLine(String text) {
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
