package dev.cks.nodeops.scaledown;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.LostAnswer;
import dev.cks.nodeops.cloudstack.OwnerScope;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.CloudStackWrite;
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
 * the end even past the deadline once a write was sent. Every CloudStack write goes through
 * {@link CloudStackWrite}: sent once, its intent and job kept in status, a lost answer looked up, never
 * assumed done or undone. What is reported removed is what CloudStack shows removed.
 */
final class ScaleDownRemoval {
    static final Duration POLL_JOB = Duration.ofSeconds(2);

    private final CloudStackAccess cloudStack;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final ScaleDownRollback rollback;
    private final Duration recheckCloudStack;
    private final CloudStackWrite writes;

    ScaleDownRemoval(CloudStackAccess cloudStack, NodeWork work, OperationRecorder recorder, StatusStore store, ScaleDownRollback rollback,
            Duration recheckCloudStack) {
        this.cloudStack = cloudStack;
        this.work = work;
        this.recorder = recorder;
        this.store = store;
        this.rollback = rollback;
        this.recheckCloudStack = recheckCloudStack;
        this.writes = new CloudStackWrite(recheckCloudStack);
    }

    /** CloudStack does not list the cluster to these keys now: nothing about the removal can be concluded. */
    private static final class ClusterNotListed extends RuntimeException {
        ClusterNotListed() {
            super(null, null, false, false);
        }
    }

    Step step(ScaleDown resource, Instant now) {
        Instant deadline = resource.getStatus().deadlineAt(now);
        if (deadline != null && !now.isBefore(deadline) && nothingAskedOrRemoved(resource)) {
            // Nothing is in CloudStack's hands yet: the nodes are given back rather than kept cordoned past the deadline.
            return rollback.rollBack(resource, "DeadlinePassed", "The deadline " + resource.getStatus().getDeadline() + " (spec.timeoutSeconds) passed"
                    + " after every node was drained but before CloudStack was asked to remove any" + lastWait(resource) + ".", now);
        }
        try {
            return resource.getSpec().getRemoval() == ScaleDownSpec.Removal.DestroyVM ? destroyStep(resource, now) : scaleStep(resource, now);
        } catch (ClusterNotListed e) {
            return clusterNotFound(resource, now);
        } catch (CloudStackAccess.Unavailable e) {
            // The Secret went away or broke mid-way: removal must still finish, so wait for it to be fixed.
            recorder.waiting(resource, CloudStackWait.UNAVAILABLE, "The nodes are drained but CloudStack cannot be reached ("
                    + e.getMessage() + "); removal goes on once it can.", now);
            return Step.after(recheckCloudStack);
        } catch (CloudStackException e) {
            // A read (the cluster, a VM, the jobs) did not answer: nothing is decided without it.
            recorder.waiting(resource, CloudStackWait.reason(e), "CloudStack did not answer during the removal ("
                    + e.getMessage() + "); asking again in " + recheckCloudStack.toSeconds() + "s.", now);
            return Step.after(recheckCloudStack);
        }
    }

    /**
     * No write was sent or may still arrive, no VM was removed and no Node object deleted: giving the nodes back
     * leaves everything as it was before the ScaleDown.
     */
    private boolean nothingAskedOrRemoved(ScaleDown resource) {
        ScaleDownStatus status = resource.getStatus();
        RemovalStatus removal = status.getRemoval();
        if (removal != null && (removal.getRequestedAt() != null || removal.getJobId() != null)) {
            return false;
        }
        return status.getNodes().stream().allMatch(node -> node.getPhase() != Phase.Removed && node.getRemovalRequestedAt() == null
                && node.getRemovalJobId() == null && work.node(node.getName()).isPresent());
    }

    /** Why it waited, as the Waiting condition said, for the rollback's message. */
    private static String lastWait(ScaleDown resource) {
        return resource.getStatus().getConditions().stream().filter(c -> Conditions.WAITING.equals(c.getType()) && "True".equals(c.getStatus()))
                .findFirst().map(c -> " (" + withoutFullStop(c.getMessage()) + ")").orElse("");
    }

    // ---- CloudStackScale ----------------------------------------------------------------------

    /**
     * The one cluster-level call that removes every VM (scaleKubernetesCluster with the VMs as nodeids, or
     * removeNodesFromKubernetesCluster for external nodes), with the kill points around it.
     */
    private record ClusterCall(RemovalCommand command, CloudStackCommand api, CloudStackWrite.KillPoints killPoints) {
        static ClusterCall of(RemovalStatus removal) {
            return removal.getCommand() == RemovalCommand.removeNodesFromKubernetesCluster
                    ? new ClusterCall(RemovalCommand.removeNodesFromKubernetesCluster, CloudStackCommand.REMOVE_NODES_FROM_KUBERNETES_CLUSTER,
                            new CloudStackWrite.KillPoints(KillPoint.SCALEDOWN_REMOVE_NODES_INTENT, KillPoint.SCALEDOWN_REMOVE_NODES_ANSWERED,
                                    KillPoint.SCALEDOWN_REMOVE_NODES_DONE))
                    // A status written before the command was recorded is a scale's.
                    : new ClusterCall(RemovalCommand.scaleKubernetesCluster, CloudStackCommand.SCALE_KUBERNETES_CLUSTER,
                            new CloudStackWrite.KillPoints(KillPoint.SCALEDOWN_SCALE_INTENT, KillPoint.SCALEDOWN_SCALE_ANSWERED,
                                    KillPoint.SCALEDOWN_SCALE_DONE));
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
        String clusterId = status.getClusterId();
        CloudStackWrite.Write write = new CloudStackWrite.Write(call.api(), call.api().apiName() + " of VMs " + String.join(", ", vmIds)
                + " (cluster " + clusterId + ")", LostAnswer.JobInstance.kubernetesCluster(clusterId), client -> removedFromMap(client, clusterId, vmIds),
                client -> call.start(client, clusterId, vmIds),
                CloudStackWrite.Record.inStatus(removal::getRequestedAt, removal::setRequestedAt, removal::getJobId, removal::setJobId),
                call.killPoints(), jobId -> recorder.event(resource, "RemovalRequested", "Asked CloudStack to remove VMs " + String.join(", ", vmIds)
                        + " from Kubernetes cluster " + clusterId + " (" + call.api().apiName() + ", job " + jobId + ")."));
        CloudStackWrite.Outcome outcome = writes.advance(cs, write, recorder.writeReport(resource, store, "Removing", now), now);
        if (outcome instanceof CloudStackWrite.Pending pending) {
            return pending.step();
        }
        if (outcome instanceof CloudStackWrite.Refused refused) {
            return removalFailed(resource, refused.message(), now);
        }
        return scaleOutcome(resource, cs, vmIds, outcome instanceof CloudStackWrite.Failed failed ? withoutFullStop(failed.message()) : null, now);
    }

    /** The cluster has settled and none of the VMs is in its map any more. */
    private static boolean removedFromMap(CloudStackClient cs, String clusterId, List<String> vmIds) {
        KubernetesCluster cluster = cs.findKubernetesCluster(clusterId).orElseThrow(ClusterNotListed::new);
        return !CloudStackAccess.isBusy(cluster) && vmIds.stream().noneMatch(cluster.vmIds()::contains);
    }

    private static String withoutFullStop(String sentence) {
        return sentence.endsWith(".") ? sentence.substring(0, sentence.length() - 1) : sentence;
    }

    /**
     * Removal begins: the call is chosen from the VM map as it is now (external nodes or not) and persisted with
     * the first request's time. Empty when it began; otherwise the step to take (targets that no longer go by
     * one call, which fails the removal before anything is asked of CloudStack).
     */
    private Optional<Step> beginClusterRemoval(ScaleDown resource, CloudStackClient cs, List<String> vmIds, Instant now) {
        KubernetesCluster cluster = cs.findKubernetesCluster(resource.getStatus().getClusterId()).orElseThrow(ClusterNotListed::new);
        List<VirtualMachine> vms = cluster.virtualMachines().stream().filter(vm -> vmIds.contains(vm.id())).toList();
        Optional<RemovalCommand> command = ScaleDownTargets.removalCommand(ScaleDownSpec.Removal.CloudStackScale, vms);
        startRemoval(resource, vmIds, command.orElse(null), now);
        if (command.isEmpty()) {
            return Optional.of(removalFailed(resource, "CloudStack now lists some of VMs " + String.join(", ", vmIds) + " as external nodes and "
                    + "others not: no one call removes both, so nothing was asked of CloudStack. Remove them in separate ScaleDowns.", now));
        }
        return Optional.empty();
    }

    /** The end of a scale, decided from the VM map: what left it is removed, what is still in it is not. */
    private Step scaleOutcome(ScaleDown resource, CloudStackClient cs, List<String> vmIds, String failure, Instant now) {
        KubernetesCluster cluster = cs.findKubernetesCluster(resource.getStatus().getClusterId()).orElseThrow(ClusterNotListed::new);
        if (CloudStackAccess.isBusy(cluster)) {
            recorder.progressing(resource, "Removing", "CloudStack Kubernetes cluster " + cluster.name() + " is " + cluster.state()
                    + "; the removal's outcome is read once it has settled.", now);
            return Step.after(POLL_JOB);
        }
        ScaleDownSteps.RemovalSplit split = ScaleDownSteps.split(vmIds, Set.copyOf(cluster.vmIds()));
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
        CloudStackWrite.Report report = recorder.writeReport(resource, store, "Removing", now);
        if (node.getRemovalJobId() == null && node.getRemovalRequestedAt() == null) {
            // kubectl delete node --ignore-not-found; an API error throws and the reconcile is retried.
            work.delete(node.getName());
            KillPoint.SCALEDOWN_DESTROY_NODE_DELETED.reached();
            CloudStackWrite.Outcome unmapped = writes.advance(cs, unmap(status.getClusterId(), node), report, now);
            if (!(unmapped instanceof CloudStackWrite.Done)) {
                return destroyOutcome(resource, node, unmapped, now);
            }
        }
        CloudStackWrite.Write destroy = new CloudStackWrite.Write(CloudStackCommand.DESTROY_VIRTUAL_MACHINE, "destroyVirtualMachine of VM "
                + node.getVmId() + " (node " + node.getName() + ")", LostAnswer.JobInstance.virtualMachine(node.getVmId()),
                client -> vmGone(client, node.getVmId()), client -> client.startDestroyVirtualMachine(node.getVmId()),
                CloudStackWrite.Record.inStatus(node::getRemovalRequestedAt, node::setRemovalRequestedAt, node::getRemovalJobId, node::setRemovalJobId),
                new CloudStackWrite.KillPoints(KillPoint.SCALEDOWN_DESTROY_INTENT, KillPoint.SCALEDOWN_DESTROY_ANSWERED, KillPoint.SCALEDOWN_DESTROY_DONE));
        return destroyOutcome(resource, node, writes.advance(cs, destroy, report, now), now);
    }

    private Step destroyOutcome(ScaleDown resource, ScaleDownNodeStatus node, CloudStackWrite.Outcome outcome, Instant now) {
        if (outcome instanceof CloudStackWrite.Pending pending) {
            return pending.step();
        }
        if (outcome instanceof CloudStackWrite.Refused refused) {
            return removalFailed(resource, refused.message(), now);
        }
        return outcome instanceof CloudStackWrite.Failed failed ? removalFailed(resource, failed.message(), now) : destroyed(resource, node, now);
    }

    /**
     * Drops the node's VM from an ExternalManaged cluster's map. Synchronous, and looked up before each try
     * (the VM still mapped), so nothing of it is kept: a restart, or an answer lost after CloudStack dropped
     * it, finds it gone.
     */
    private static CloudStackWrite.Write unmap(String clusterId, ScaleDownNodeStatus node) {
        return new CloudStackWrite.Write(CloudStackCommand.REMOVE_VIRTUAL_MACHINES_FROM_KUBERNETES_CLUSTER,
                "removeVirtualMachinesFromKubernetesCluster of VM " + node.getVmId() + " (node " + node.getName() + ") from the cluster's VM map",
                LostAnswer.JobInstance.kubernetesCluster(clusterId),
                client -> !client.findKubernetesCluster(clusterId).orElseThrow(ClusterNotListed::new).vmIds().contains(node.getVmId()),
                client -> {
                    client.removeVirtualMachinesFromKubernetesCluster(clusterId, List.of(node.getVmId()));
                    return null;
                }, CloudStackWrite.Record.unkept(), new CloudStackWrite.KillPoints(null, KillPoint.SCALEDOWN_UNMAP_ANSWERED, null));
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

    private Step clusterNotFound(ScaleDown resource, Instant now) {
        recorder.waiting(resource, CloudStackWait.UNAVAILABLE, "CloudStack does not list Kubernetes cluster "
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
                "Removed " + String.join(", ", status.getTargetNodes()) + " " + where + ScaleDownSteps.keptNote(status), now);
        return Step.finished();
    }

    /** DestroyVM failed part way: what was destroyed is removed, the rest stays. */
    private Step removalFailed(ScaleDown resource, String why, Instant now) {
        List<String> vmIds = ScaleDownSteps.vmIds(resource.getStatus().getNodes());
        Set<String> removed = resource.getStatus().getNodes().stream().filter(n -> n.getPhase() == Phase.Removed).map(ScaleDownNodeStatus::getVmId)
                .collect(Collectors.toSet());
        if (resource.getSpec().getRemoval() == ScaleDownSpec.Removal.CloudStackScale) {
            // Refused before anything was done; still, what is reported is what the map shows.
            return scaleOutcome(resource, cloudStack.client(), vmIds, withoutFullStop(why), now);
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
                recorder.uncordoned(resource, node.getName(), "as the removal failed before it");
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
