package dev.cks.nodeops.scaledown;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.cks.nodeops.cloudstack.AsyncJobResult;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.JobWait;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.LostAnswer;
import dev.cks.nodeops.cloudstack.OwnerScope;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.cloudstack.WriteFailure;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalCommand;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalStatus;

/**
 * The last phase of a ScaleDown: every node is drained, so the VMs go, through CloudStack. It runs to
 * the end even past the deadline. Every CloudStack write is sent once: the time it is sent is written
 * to status before, its job id right after. A write whose answer is lost, or one a restarted operator
 * finds sent but without a job, is looked up ({@link LostAnswer}: what CloudStack shows, then the key's
 * jobs, then time) and never assumed done or undone; only a request CloudStack provably never took is
 * sent again. What is reported removed is what CloudStack shows removed.
 */
final class ScaleDownRemoval {
    static final Duration POLL_JOB = Duration.ofSeconds(2);
    static final String ANSWER_LOST = "CloudStackAnswerLost";
    /** While a request whose answer was lost may still arrive, how often CloudStack is looked at for its job. */
    static final Duration LOOK_FOR_LATE_REQUEST = Duration.ofMinutes(1);

    private final CloudStackAccess cloudStack;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final Duration recheckCloudStack;

    ScaleDownRemoval(CloudStackAccess cloudStack, NodeWork work, OperationRecorder recorder, StatusStore store, Duration recheckCloudStack) {
        this.cloudStack = cloudStack;
        this.work = work;
        this.recorder = recorder;
        this.store = store;
        this.recheckCloudStack = recheckCloudStack;
    }

    Step step(ScaleDown resource, Instant now) {
        try {
            return resource.getSpec().getRemoval() == ScaleDownSpec.Removal.DestroyVM ? destroyStep(resource, now) : scaleStep(resource, now);
        } catch (CloudStackAccess.Unavailable e) {
            // The Secret went away or broke mid-way: removal must still finish, so wait for it to be fixed.
            recorder.waiting(resource, ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE, "The nodes are drained but CloudStack cannot be reached ("
                    + e.getMessage() + "); removal goes on once it can.", now);
            return Step.after(recheckCloudStack);
        } catch (CloudStackException e) {
            // A read (the cluster, a VM, the jobs) did not answer: nothing is decided without it.
            recorder.waiting(resource, ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE, "CloudStack did not answer during the removal ("
                    + e.getMessage() + "); asking again in " + recheckCloudStack.toSeconds() + "s.", now);
            return Step.after(recheckCloudStack);
        }
    }

    // ---- CloudStackScale ----------------------------------------------------------------------

    /**
     * The one cluster-level call that removes every VM (scaleKubernetesCluster with the VMs as nodeids, or
     * removeNodesFromKubernetesCluster for external nodes), with the kill points around it; the reads and
     * records are the same for both.
     */
    private record ClusterCall(RemovalCommand command, CloudStackCommand api, KillPoint intent, KillPoint answered, KillPoint done) {
        static ClusterCall of(RemovalStatus removal) {
            return removal.getCommand() == RemovalCommand.removeNodesFromKubernetesCluster
                    ? new ClusterCall(RemovalCommand.removeNodesFromKubernetesCluster, CloudStackCommand.REMOVE_NODES_FROM_KUBERNETES_CLUSTER,
                            KillPoint.SCALEDOWN_REMOVE_NODES_INTENT, KillPoint.SCALEDOWN_REMOVE_NODES_ANSWERED, KillPoint.SCALEDOWN_REMOVE_NODES_DONE)
                    // A status written before the command was recorded is a scale's.
                    : new ClusterCall(RemovalCommand.scaleKubernetesCluster, CloudStackCommand.SCALE_KUBERNETES_CLUSTER,
                            KillPoint.SCALEDOWN_SCALE_INTENT, KillPoint.SCALEDOWN_SCALE_ANSWERED, KillPoint.SCALEDOWN_SCALE_DONE);
        }

        String name() {
            return api.apiName();
        }

        /** The job a lost answer may have left names the cluster while it runs (RemoveNodesFromKubernetesClusterCmd.getApiResourceId). */
        Optional<String> jobInstance(String clusterId) {
            return command == RemovalCommand.removeNodesFromKubernetesCluster ? Optional.of(clusterId) : Optional.empty();
        }

        String start(CloudStackClient cs, String clusterId, List<String> vmIds) {
            return command == RemovalCommand.removeNodesFromKubernetesCluster ? cs.startRemoveNodesFromKubernetesCluster(clusterId, vmIds)
                    : cs.startScaleKubernetesCluster(clusterId, vmIds);
        }
    }

    /** One call for every VM (which one is chosen as removal begins and kept in status), then its job is polled. */
    private Step scaleStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        CloudStackClient cs = cloudStack.client();
        if (status.getRemoval() == null) {
            Optional<Step> undecided = beginClusterRemoval(resource, cs, vmIds, now);
            if (undecided.isPresent()) {
                return undecided.get();
            }
        }
        RemovalStatus removal = status.getRemoval();
        ClusterCall call = ClusterCall.of(removal);
        if (removal.getJobId() != null) {
            return pollScale(resource, cs, call, vmIds, now);
        }
        if (removal.getRequestedAt() != null) {
            return lookForScale(resource, cs, call, vmIds, now);
        }
        // Persist before act: from here on a restart looks at CloudStack instead of asking again.
        removal.setRequestedAt(Timestamps.format(now));
        store.persist(resource);
        call.intent().reached();
        String jobId;
        try {
            jobId = call.start(cs, status.getClusterId(), vmIds);
        } catch (CloudStackException e) {
            return writeFailed(resource, call.api(), e, now,
                    () -> removalFailed(resource, "CloudStack refused " + call.name() + ": " + e.getMessage(), now));
        }
        call.answered().reached();
        removal.setJobId(jobId);
        store.persist(resource);
        recorder.event(resource, "RemovalRequested", "Asked CloudStack to remove VMs " + String.join(", ", vmIds) + " from Kubernetes cluster "
                + status.getClusterId() + " (" + call.name() + ", job " + jobId + ").");
        return Step.after(POLL_JOB);
    }

    /**
     * Removal begins: the call is chosen from the VM map as it is now (external nodes or not) and persisted with
     * the first request's time. Empty when it began; otherwise the step to take (the cluster not listed, or
     * targets that no longer go by one call, which fails the removal before anything is asked of CloudStack).
     */
    private Optional<Step> beginClusterRemoval(ScaleDown resource, CloudStackClient cs, List<String> vmIds, Instant now) {
        Optional<KubernetesCluster> cluster = cs.findKubernetesCluster(resource.getStatus().getClusterId());
        if (cluster.isEmpty()) {
            return Optional.of(clusterNotFound(resource, now));
        }
        List<VirtualMachine> vms = cluster.get().virtualMachines().stream().filter(vm -> vmIds.contains(vm.id())).toList();
        Optional<RemovalCommand> command = ScaleDownTargets.removalCommand(ScaleDownSpec.Removal.CloudStackScale, vms);
        startRemoval(resource, vmIds, command.orElse(null), now);
        if (command.isEmpty()) {
            return Optional.of(removalFailed(resource, "CloudStack now lists some of VMs " + String.join(", ", vmIds) + " as external nodes and "
                    + "others not: no one call removes both, so nothing was asked of CloudStack. Remove them in separate ScaleDowns.", now));
        }
        return Optional.empty();
    }

    private Step pollScale(ScaleDown resource, CloudStackClient cs, ClusterCall call, List<String> vmIds, Instant now) {
        RemovalStatus removal = resource.getStatus().getRemoval();
        AsyncJobResult job;
        try {
            job = cs.queryAsyncJob(removal.getJobId());
        } catch (CloudStackException e) {
            if (!e.isUnknownId()) {
                throw e;
            }
            // Jobs are purged after job.expire.minutes: what the job did is what the cluster shows.
            return scaleOutcome(resource, cs, vmIds, "CloudStack no longer knows job " + removal.getJobId() + " (" + call.name() + ")", now);
        }
        if (job.isPending()) {
            recorder.progressing(resource, "Removing", JobWait.pending("Waiting for CloudStack job " + removal.getJobId() + " (" + call.name() + ")",
                    removal.getJobId(), Timestamps.parse(removal.getRequestedAt()), now), now);
            return Step.after(JobWait.pollInterval(Timestamps.parse(removal.getRequestedAt()), now));
        }
        if (job.succeeded()) {
            call.done().reached();
            return scaleOutcome(resource, cs, vmIds, null, now);
        }
        CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
        return scaleOutcome(resource, cs, vmIds, "CloudStack job " + removal.getJobId() + " (" + call.name() + ") failed: " + error.errorText()
                + " (error " + error.errorCode() + ")", now);
    }

    /** A removal was sent but its job is not known: look at the cluster and the key's jobs. */
    private Step lookForScale(ScaleDown resource, CloudStackClient cs, ClusterCall call, List<String> vmIds, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        RemovalStatus removal = status.getRemoval();
        Optional<KubernetesCluster> cluster = cs.findKubernetesCluster(status.getClusterId());
        if (cluster.isEmpty()) {
            return clusterNotFound(resource, now);
        }
        boolean done = !CloudStackAccess.isBusy(cluster.get()) && vmIds.stream().noneMatch(cluster.get().vmIds()::contains);
        Instant requestedAt = Timestamps.parse(removal.getRequestedAt());
        LostAnswer.Verdict verdict = LostAnswer.of(done, cs.listAsyncJobs(LostAnswer.jobsSince(requestedAt)), call.api(),
                call.jobInstance(status.getClusterId()), requestedAt, now, cs.settings().unansweredWriteWindow());
        return followLostAnswer(resource, verdict, call.name(), () -> scaleOutcome(resource, cs, vmIds, null, now),
                removal::setJobId, removal::setRequestedAt, now);
    }

    /** The end of a scale, decided from the VM map: what left it is removed, what is still in it is not. */
    private Step scaleOutcome(ScaleDown resource, CloudStackClient cs, List<String> vmIds, String failure, Instant now) {
        Optional<KubernetesCluster> cluster = cs.findKubernetesCluster(resource.getStatus().getClusterId());
        if (cluster.isEmpty()) {
            return clusterNotFound(resource, now);
        }
        if (CloudStackAccess.isBusy(cluster.get())) {
            recorder.progressing(resource, "Removing", "CloudStack Kubernetes cluster " + cluster.get().name() + " is " + cluster.get().state()
                    + "; the removal's outcome is read once it has settled.", now);
            return Step.after(POLL_JOB);
        }
        ScaleDownSteps.RemovalSplit split = ScaleDownSteps.split(vmIds, Set.copyOf(cluster.get().vmIds()));
        if (failure == null && split.remaining().isEmpty()) {
            return removalSucceeded(resource, now);
        }
        String why = failure != null ? failure + "." : "The scale ended but CloudStack still lists VMs " + String.join(", ", split.remaining())
                + " in the cluster.";
        return removalFailed(resource, why, split, now);
    }

    // ---- DestroyVM ---------------------------------------------------------------------------

    /**
     * DestroyVM, one node at a time: delete the Node, drop its VM from the cluster's map (before it is
     * expunged: CloudStack cannot drop a map entry whose VM is gone), destroy the VM and poll that job.
     * Each node's removal is recorded before the next begins.
     */
    private Step destroyStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        if (status.getRemoval() == null) {
            startRemoval(resource, ScaleDownSteps.vmIds(status.getNodes()), RemovalCommand.destroyVirtualMachine, now);
            store.persist(resource);
        }
        Optional<ScaleDownNodeStatus> next = status.getNodes().stream().filter(n -> n.getPhase() != Phase.Removed).findFirst();
        if (next.isEmpty()) {
            return removalSucceeded(resource, now);
        }
        ScaleDownNodeStatus node = next.get();
        CloudStackClient cs = cloudStack.client();
        if (node.getRemovalJobId() != null) {
            return pollDestroy(resource, cs, node, now);
        }
        if (node.getRemovalRequestedAt() != null) {
            return lookForDestroy(resource, cs, node, now);
        }
        // kubectl delete node --ignore-not-found; an API error throws and the reconcile is retried.
        work.delete(node.getName());
        KillPoint.SCALEDOWN_DESTROY_NODE_DELETED.reached();
        Optional<Step> unmapping = unmap(resource, cs, node, now);
        if (unmapping.isPresent()) {
            return unmapping.get();
        }
        node.setRemovalRequestedAt(Timestamps.format(now));
        store.persist(resource);
        KillPoint.SCALEDOWN_DESTROY_INTENT.reached();
        String jobId;
        try {
            jobId = cs.startDestroyVirtualMachine(node.getVmId());
        } catch (CloudStackException e) {
            return writeFailed(resource, CloudStackCommand.DESTROY_VIRTUAL_MACHINE, e, now, () -> removalFailed(resource,
                    "CloudStack refused to destroy VM " + node.getVmId() + " of node " + node.getName() + ": " + e.getMessage(), now));
        }
        KillPoint.SCALEDOWN_DESTROY_ANSWERED.reached();
        node.setRemovalJobId(jobId);
        store.persist(resource);
        return Step.after(POLL_JOB);
    }

    /**
     * Drops the node's VM from an ExternalManaged cluster's map: looked up first, so the call is made only
     * while the VM is still mapped (a restart, or an answer lost after CloudStack dropped it, finds it gone).
     * Empty when the VM is out of the map and may be destroyed.
     */
    private Optional<Step> unmap(ScaleDown resource, CloudStackClient cs, ScaleDownNodeStatus node, Instant now) {
        String clusterId = resource.getStatus().getClusterId();
        Optional<KubernetesCluster> cluster = cs.findKubernetesCluster(clusterId);
        if (cluster.isEmpty()) {
            return Optional.of(clusterNotFound(resource, now));
        }
        if (!cluster.get().vmIds().contains(node.getVmId())) {
            return Optional.empty();
        }
        try {
            cs.removeVirtualMachinesFromKubernetesCluster(clusterId, List.of(node.getVmId()));
        } catch (CloudStackException e) {
            return Optional.of(writeFailed(resource, CloudStackCommand.REMOVE_VIRTUAL_MACHINES_FROM_KUBERNETES_CLUSTER, e, now,
                    () -> removalFailed(resource, "CloudStack refused to drop VM " + node.getVmId() + " of node " + node.getName()
                            + " from the cluster's VM map: " + e.getMessage(), now)));
        }
        KillPoint.SCALEDOWN_UNMAP_ANSWERED.reached();
        return Optional.empty();
    }

    private Step pollDestroy(ScaleDown resource, CloudStackClient cs, ScaleDownNodeStatus node, Instant now) {
        AsyncJobResult job;
        try {
            job = cs.queryAsyncJob(node.getRemovalJobId());
        } catch (CloudStackException e) {
            if (!e.isUnknownId()) {
                throw e;
            }
            return vmGone(cs, node.getVmId()) ? destroyed(resource, node, now)
                    : removalFailed(resource, "CloudStack no longer knows job " + node.getRemovalJobId() + " destroying VM " + node.getVmId()
                            + " of node " + node.getName() + ", and the VM is still there.", now);
        }
        if (job.isPending()) {
            recorder.progressing(resource, "Removing", JobWait.pending("Waiting for CloudStack job " + node.getRemovalJobId()
                    + " (destroyVirtualMachine of VM " + node.getVmId() + " (node " + node.getName() + "))", node.getRemovalJobId(),
                    Timestamps.parse(node.getRemovalRequestedAt()), now), now);
            return Step.after(JobWait.pollInterval(Timestamps.parse(node.getRemovalRequestedAt()), now));
        }
        if (job.failed()) {
            CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
            return removalFailed(resource, "CloudStack job " + node.getRemovalJobId() + " could not destroy VM " + node.getVmId() + " of node "
                    + node.getName() + ": " + error.errorText() + " (error " + error.errorCode() + ").", now);
        }
        KillPoint.SCALEDOWN_DESTROY_DONE.reached();
        return destroyed(resource, node, now);
    }

    private Step lookForDestroy(ScaleDown resource, CloudStackClient cs, ScaleDownNodeStatus node, Instant now) {
        Instant requestedAt = Timestamps.parse(node.getRemovalRequestedAt());
        LostAnswer.Verdict verdict = LostAnswer.of(vmGone(cs, node.getVmId()), cs.listAsyncJobs(LostAnswer.jobsSince(requestedAt)),
                CloudStackCommand.DESTROY_VIRTUAL_MACHINE, Optional.of(node.getVmId()), requestedAt, now, cs.settings().unansweredWriteWindow());
        return followLostAnswer(resource, verdict, "destroyVirtualMachine of VM " + node.getVmId(), () -> destroyed(resource, node, now),
                node::setRemovalJobId, node::setRemovalRequestedAt, now);
    }

    /** Expunged (no longer listed), or destroyed and waiting for CloudStack's expunge interval. */
    private static boolean vmGone(CloudStackClient cs, String vmId) {
        return cs.findVirtualMachine(OwnerScope.CALLER, vmId).map(ScaleDownRemoval::isDestroyed).orElse(true);
    }

    private static boolean isDestroyed(VirtualMachine vm) {
        return "Destroyed".equalsIgnoreCase(vm.state()) || "Expunging".equalsIgnoreCase(vm.state()) || "Expunged".equalsIgnoreCase(vm.state());
    }

    private Step destroyed(ScaleDown resource, ScaleDownNodeStatus node, Instant now) {
        RemovalStatus removal = resource.getStatus().getRemoval();
        node.setPhase(Phase.Removed);
        if (!removal.getRemovedVmIds().contains(node.getVmId())) {
            removal.getRemovedVmIds().add(node.getVmId());
        }
        removal.getRemainingVmIds().remove(node.getVmId());
        recorder.event(resource, "NodeRemoved", "Deleted node " + node.getName() + " and destroyed its VM " + node.getVmId() + ".");
        return Step.next();
    }

    // ---- Shared ------------------------------------------------------------------------------

    /**
     * A write that did not go through: refused for good (the caller's failure), refused for now (asked
     * again later: the request left no trace), or unknown (looked up from the next step on).
     */
    private Step writeFailed(ScaleDown resource, CloudStackCommand command, CloudStackException e, Instant now, Supplier<Step> refused) {
        return switch (WriteFailure.of(e)) {
            case REFUSED -> refused.get();
            case REFUSED_FOR_NOW -> {
                // Written now: a request time left on the server would make the next step look for the request for minutes.
                clearRequest(resource);
                store.persist(resource);
                recorder.waiting(resource, ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE, "CloudStack turned " + command.apiName()
                        + " away before acting on it (" + e.getMessage() + "); asking again in " + recheckCloudStack.toSeconds() + "s.", now);
                yield Step.after(recheckCloudStack);
            }
            case UNKNOWN -> {
                recorder.waiting(resource, ANSWER_LOST, "CloudStack's answer to " + command.apiName() + " was lost (" + e.getMessage()
                        + "); it may have been done, so CloudStack's state and its jobs are read before anything else is decided.", now);
                yield Step.after(POLL_JOB);
            }
        };
    }

    /** Nothing reached CloudStack: the request is no longer in flight (a synchronous write keeps no request time). */
    private static void clearRequest(ScaleDown resource) {
        RemovalStatus removal = resource.getStatus().getRemoval();
        if (resource.getSpec().getRemoval() == ScaleDownSpec.Removal.CloudStackScale) {
            removal.setRequestedAt(null);
        } else {
            resource.getStatus().getNodes().stream().filter(n -> n.getPhase() != Phase.Removed).findFirst()
                    .ifPresent(node -> node.setRemovalRequestedAt(null));
        }
    }

    /**
     * Acts on what CloudStack shows of a write whose answer was lost: done; its job found (recorded and
     * followed, also a failed one, whose failure is then reported); not yet (the request may still
     * arrive); or never arrived (the request time is cleared, so the next step sends it again).
     */
    private Step followLostAnswer(ScaleDown resource, LostAnswer.Verdict verdict, String what, Supplier<Step> done,
            Consumer<String> recordJob, Consumer<String> recordRequest, Instant now) {
        if (verdict instanceof LostAnswer.Done) {
            return done.get();
        }
        if (verdict instanceof LostAnswer.NotYet notYet) {
            recorder.waiting(resource, ANSWER_LOST, "CloudStack shows no job and no effect of " + what + " yet; the request could still reach it until "
                    + Timestamps.format(notYet.until()) + ", so it is not sent again before then; looking for it every "
                    + LOOK_FOR_LATE_REQUEST.toSeconds() + "s.", now);
            Instant next = now.plus(LOOK_FOR_LATE_REQUEST);
            return Step.at(next.isBefore(notYet.until()) ? next : notYet.until(), now);
        }
        if (verdict instanceof LostAnswer.NeverArrived) {
            recordRequest.accept(null);
            store.persist(resource);
            recorder.event(resource, "RequestResent", "CloudStack never received " + what + " (no job, no effect, and the request can no longer "
                    + "be taken); sending it again.");
            return Step.next();
        }
        String jobId = verdict instanceof LostAnswer.Running running ? running.jobId() : ((LostAnswer.Failed) verdict).job().jobId();
        recordJob.accept(jobId);
        store.persist(resource);
        recorder.progressing(resource, "Removing", "Found CloudStack job " + jobId + " of " + what + ", whose answer was lost; following it.", now);
        return Step.next();
    }

    private Step clusterNotFound(ScaleDown resource, Instant now) {
        recorder.waiting(resource, ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE, "CloudStack does not list Kubernetes cluster "
                + resource.getStatus().getClusterId() + " to these keys now; without it nothing is concluded about the removal. Looking again in "
                + recheckCloudStack.toSeconds() + "s.", now);
        return Step.after(recheckCloudStack);
    }

    /** Removal begins; it is persisted before anything is asked of CloudStack (with the first request's time, for a cluster call). */
    private static RemovalStatus startRemoval(ScaleDown resource, List<String> vmIds, RemovalCommand command, Instant now) {
        RemovalStatus removal = new RemovalStatus();
        removal.setCommand(command);
        removal.setStartedAt(Timestamps.format(now));
        removal.setRemainingVmIds(new ArrayList<>(vmIds));
        resource.getStatus().setRemoval(removal);
        return removal;
    }

    private Step removalSucceeded(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        for (ScaleDownNodeStatus node : status.getNodes()) {
            // CloudStack destroyed the VM (or reset an external node's kubelet); the Node object would linger NotReady otherwise.
            work.delete(node.getName());
            KillPoint.SCALEDOWN_NODE_DELETED.reached();
            node.setPhase(Phase.Removed);
        }
        status.getRemoval().setRemovedVmIds(new ArrayList<>(ScaleDownSteps.vmIds(status.getNodes())));
        status.getRemoval().setRemainingVmIds(new ArrayList<>());
        status.setProgress(ScaleDownSteps.progress(status.getNodes()));
        String where = status.getRemoval().getCommand() == RemovalCommand.removeNodesFromKubernetesCluster
                ? "from the cluster and from CloudStack's Kubernetes cluster (removeNodesFromKubernetesCluster); their VMs stay, reset by CloudStack."
                : "from the cluster and from CloudStack.";
        recorder.finished(resource, Stage.SUCCEEDED, Conditions.SUCCEEDED, "Removed",
                "Removed " + status.getTargetNodes() + " " + where + ScaleDownSteps.keptNote(status), now);
        return Step.finished();
    }

    /** DestroyVM failed part way: what was destroyed is removed, the rest stays. */
    private Step removalFailed(ScaleDown resource, String why, Instant now) {
        List<String> vmIds = ScaleDownSteps.vmIds(resource.getStatus().getNodes());
        Set<String> removed = resource.getStatus().getNodes().stream().filter(n -> n.getPhase() == Phase.Removed).map(ScaleDownNodeStatus::getVmId)
                .collect(Collectors.toSet());
        if (resource.getSpec().getRemoval() == ScaleDownSpec.Removal.CloudStackScale) {
            // Refused before anything was done; still, what is reported is what the map shows.
            return scaleOutcome(resource, cloudStack.client(), vmIds, why.endsWith(".") ? why.substring(0, why.length() - 1) : why, now);
        }
        return removalFailed(resource, why, ScaleDownSteps.split(vmIds, vmIds.stream().filter(id -> !removed.contains(id)).collect(Collectors.toSet())), now);
    }

    /** Removal failed: what is gone is listed, nodes still here are given back (uncordoned where we cordoned them). */
    private Step removalFailed(ScaleDown resource, String why, ScaleDownSteps.RemovalSplit split, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = ScaleDownReconciler.owner(resource);
        status.getRemoval().setRemovedVmIds(new ArrayList<>(split.removed()));
        status.getRemoval().setRemainingVmIds(new ArrayList<>(split.remaining()));
        List<String> uncordoned = new ArrayList<>();
        for (ScaleDownNodeStatus node : status.getNodes()) {
            boolean removed = node.getVmId() != null && split.removed().contains(node.getVmId());
            if (work.release(node.getName(), owner, !removed)) {
                uncordoned.add(node.getName());
                node.setPhase(Phase.Uncordoned);
            } else if (removed) {
                node.setPhase(Phase.Removed);
            }
            KillPoint.SCALEDOWN_FAILED_RELEASED.reached();
        }
        String message = why + "\nRemoved VMs: " + (split.removed().isEmpty() ? "none" : String.join(", ", split.removed()))
                + "; not removed: " + (split.remaining().isEmpty() ? "none" : String.join(", ", split.remaining()))
                + (uncordoned.isEmpty() ? "." : "; uncordoned " + String.join(", ", uncordoned) + ".");
        recorder.finished(resource, Stage.FAILED, Conditions.FAILED, "RemovalFailed", message, now);
        return Step.finished();
    }
}
