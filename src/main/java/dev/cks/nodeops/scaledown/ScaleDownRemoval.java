package dev.cks.nodeops.scaledown;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import dev.cks.nodeops.cloudstack.AsyncJobResult;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalStatus;

/**
 * The last phase of a ScaleDown: every node is drained, so the VMs go, through CloudStack. It runs to
 * the end even past the deadline. Each CloudStack write is recorded in status before it is sent and
 * its job id right after, so a restarted operator polls the same job instead of asking again.
 */
final class ScaleDownRemoval {
    static final Duration POLL_JOB = Duration.ofSeconds(2);

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
        }
    }

    /** CloudStackScale: one scaleKubernetesCluster with the VMs as nodeids, then its job is polled. */
    private Step scaleStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        CloudStackClient cs = cloudStack.client();
        RemovalStatus removal = status.getRemoval();
        if (removal == null) {
            // Persist before act: a restart from here on never calls scaleKubernetesCluster a second time.
            removal = recordRemovalStart(resource, vmIds, now);
            recorder.event(resource, "RemovalRequested", "Asking CloudStack to remove VMs " + String.join(", ", vmIds)
                    + " from Kubernetes cluster " + status.getClusterId() + " (scaleKubernetesCluster).");
            try {
                removal.setJobId(cs.startScaleKubernetesCluster(status.getClusterId(), vmIds));
            } catch (CloudStackException e) {
                return removalFailed(resource, "CloudStack refused scaleKubernetesCluster: " + e.getMessage(), vmIds, now);
            }
            store.persist(resource);
            return Step.after(POLL_JOB);
        }
        if (removal.getJobId() == null) {
            // The operator stopped between asking and hearing the job id: look instead of asking again.
            KubernetesCluster cluster = cs.findKubernetesCluster(status.getClusterId()).orElse(null);
            return switch (ScaleDownSteps.removalSeen(cluster, vmIds)) {
                case DONE -> removalSucceeded(resource, now);
                case IN_PROGRESS -> Step.after(POLL_JOB);
                case NOT_STARTED -> removalFailed(resource, "Removal was requested from CloudStack, but the operator stopped before CloudStack "
                        + "answered and CloudStack shows no scale of the cluster; to be safe it is not asked again. Check the cluster's "
                        + "async jobs in CloudStack, then create a new ScaleDown for the nodes still there.", vmIds, now);
            };
        }
        Optional<AsyncJobResult> job = poll(resource, removal.getJobId(), now);
        if (job.isEmpty()) {
            return Step.after(recheckCloudStack);
        }
        if (job.get().isPending()) {
            recorder.progressing(resource, "Removing", "Waiting for CloudStack job " + removal.getJobId() + " (scaleKubernetesCluster).", now);
            return Step.after(POLL_JOB);
        }
        if (job.get().succeeded()) {
            return removalSucceeded(resource, now);
        }
        CloudStackResponses.ApiError error = CloudStackResponses.jobError(job.get());
        return removalFailed(resource, "CloudStack job " + removal.getJobId() + " (scaleKubernetesCluster) failed: " + error.errorText()
                + " (error " + error.errorCode() + ").", vmIds, now);
    }

    /**
     * DestroyVM, one node at a time: delete the Node, start destroying its VM and record the job, poll it
     * in later reconciles; each VM's removal is recorded before the next begins. Then the VMs are dropped
     * from the cluster's map.
     */
    private Step destroyStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        CloudStackClient cs = cloudStack.client();
        RemovalStatus removal = status.getRemoval() != null ? status.getRemoval() : recordRemovalStart(resource, vmIds, now);
        Optional<ScaleDownNodeStatus> next = status.getNodes().stream().filter(n -> n.getPhase() != Phase.Removed).findFirst();
        if (next.isEmpty()) {
            try {
                cs.removeVirtualMachinesFromKubernetesCluster(status.getClusterId(), vmIds);
            } catch (CloudStackException e) {
                return removalFailed(resource, "The VMs are destroyed, but CloudStack did not drop them from the cluster's VM map: " + e.getMessage()
                        + " Remove them with removeVirtualMachinesFromKubernetesCluster.", List.of(), now);
            }
            return removalSucceeded(resource, now);
        }
        ScaleDownNodeStatus node = next.get();
        if (node.getRemovalJobId() == null) {
            // kubectl delete node --ignore-not-found; an API error throws and the reconcile is retried.
            work.delete(node.getName());
            try {
                node.setRemovalJobId(cs.startDestroyVirtualMachine(node.getVmId()));
            } catch (CloudStackException e) {
                return removalFailed(resource, "CloudStack refused to destroy VM " + node.getVmId() + " of node " + node.getName()
                        + ": " + e.getMessage(), removal.getRemainingVmIds(), now);
            }
            store.persist(resource);
            return Step.after(POLL_JOB);
        }
        Optional<AsyncJobResult> job = poll(resource, node.getRemovalJobId(), now);
        if (job.isEmpty()) {
            return Step.after(recheckCloudStack);
        }
        if (job.get().isPending()) {
            recorder.progressing(resource, "Removing", "Waiting for CloudStack job " + node.getRemovalJobId() + " destroying VM "
                    + node.getVmId() + " of node " + node.getName() + ".", now);
            return Step.after(POLL_JOB);
        }
        if (job.get().failed()) {
            CloudStackResponses.ApiError error = CloudStackResponses.jobError(job.get());
            return removalFailed(resource, "CloudStack job " + node.getRemovalJobId() + " could not destroy VM " + node.getVmId()
                    + " of node " + node.getName() + ": " + error.errorText() + " (error " + error.errorCode() + ").", removal.getRemainingVmIds(), now);
        }
        node.setPhase(Phase.Removed);
        removal.getRemovedVmIds().add(node.getVmId());
        removal.getRemainingVmIds().remove(node.getVmId());
        recorder.event(resource, "NodeRemoved", "Deleted node " + node.getName() + " and destroyed its VM " + node.getVmId() + ".");
        return Step.next();
    }

    /** One look at a CloudStack job; empty (and a Waiting condition) when CloudStack did not answer. */
    private Optional<AsyncJobResult> poll(ScaleDown resource, String jobId, Instant now) {
        try {
            return Optional.of(cloudStack.client().queryAsyncJob(jobId));
        } catch (CloudStackException e) {
            recorder.waiting(resource, ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE, "Could not ask CloudStack about job " + jobId + " ("
                    + e.getMessage() + "); asking again.", now);
            return Optional.empty();
        }
    }

    /** Removal begins: recorded and saved before anything is asked of CloudStack. */
    private RemovalStatus recordRemovalStart(ScaleDown resource, List<String> vmIds, Instant now) {
        RemovalStatus removal = new RemovalStatus();
        removal.setStartedAt(Timestamps.format(now));
        removal.setRemainingVmIds(new ArrayList<>(vmIds));
        resource.getStatus().setRemoval(removal);
        store.persist(resource);
        return removal;
    }

    private Step removalSucceeded(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        for (ScaleDownNodeStatus node : status.getNodes()) {
            // CloudStack destroyed the VM; the Node object would linger NotReady otherwise.
            work.delete(node.getName());
            node.setPhase(Phase.Removed);
        }
        status.getRemoval().setRemovedVmIds(new ArrayList<>(ScaleDownSteps.vmIds(status.getNodes())));
        status.getRemoval().setRemainingVmIds(new ArrayList<>());
        status.setProgress(ScaleDownSteps.progress(status.getNodes()));
        recorder.finished(resource, Stage.SUCCEEDED, Conditions.SUCCEEDED, "Removed",
                "Removed " + status.getTargetNodes() + " from the cluster and from CloudStack." + ScaleDownSteps.keptNote(status), now);
        return Step.finished();
    }

    /** Removal failed part way: what is gone is listed, nodes still here are given back (uncordoned where we cordoned them). */
    private Step removalFailed(ScaleDown resource, String why, List<String> candidatesRemaining, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        String owner = ScaleDownReconciler.owner(resource);
        List<String> vmIds = ScaleDownSteps.vmIds(status.getNodes());
        Set<String> stillMapped;
        try {
            stillMapped = cloudStack.client().findKubernetesCluster(status.getClusterId()).map(KubernetesCluster::vmIds).orElse(Set.of());
        } catch (CloudStackException | CloudStackAccess.Unavailable e) {
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
        for (ScaleDownNodeStatus node : status.getNodes()) {
            boolean removed = node.getVmId() != null && split.removed().contains(node.getVmId());
            if (work.release(node.getName(), owner, !removed)) {
                uncordoned.add(node.getName());
                node.setPhase(Phase.Uncordoned);
            } else if (removed) {
                node.setPhase(Phase.Removed);
            }
        }
        String message = why + "\nRemoved VMs: " + (split.removed().isEmpty() ? "none" : String.join(", ", split.removed()))
                + "; still in the cluster: " + (split.remaining().isEmpty() ? "none" : String.join(", ", split.remaining()))
                + (uncordoned.isEmpty() ? "." : "; uncordoned " + String.join(", ", uncordoned) + ".");
        recorder.finished(resource, Stage.FAILED, Conditions.FAILED, "RemovalFailed", message, now);
        return Step.finished();
    }
}
