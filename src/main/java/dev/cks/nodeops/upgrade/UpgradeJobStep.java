package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import dev.cks.nodeops.cloudstack.AsyncJobResult;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The {@code Upgrading} phase of one node: for CloudStackIso, attach the version's ISO (a CloudStack job,
 * polled), then the executor Job, then detach the ISO (polled) whatever the Job's outcome. Every step is
 * recorded in the node's status, so a restarted operator carries on with the same Job and ISO job.
 */
final class UpgradeJobStep {
    static final Duration POLL_ISO_JOB = Duration.ofSeconds(2);
    static final Duration RECHECK_CLOUDSTACK = Duration.ofSeconds(10);
    static final String CLOUDSTACK_UNAVAILABLE = "CloudStackUnavailable";

    sealed interface Outcome {
    }

    record Continue(Step step) implements Outcome {
    }

    record NodeFailed(String error) implements Outcome {
    }

    /** The Job succeeded and no ISO of ours is attached any more. */
    record Upgraded() implements Outcome {
    }

    private final UpgradeJobs jobs;
    private final CloudStackIsoExecutor iso;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final OperatorSettings settings;
    private final ScriptTrust scripts;

    UpgradeJobStep(UpgradeJobs jobs, CloudStackIsoExecutor iso, OperationRecorder recorder, StatusStore store, OperatorSettings settings) {
        this.jobs = jobs;
        this.iso = iso;
        this.recorder = recorder;
        this.store = store;
        this.settings = settings;
        this.scripts = new ScriptTrust(settings.upgrade().scriptSha256().orElse(Set.of()));
    }

    /**
     * Before the node is locked and cordoned, a node is never drained for an upgrade that cannot run:
     * Script — the script is one the operator's configuration allows (docs/security.md); CloudStackIso —
     * CloudStack is not changing the cluster itself, the node has a VM and the target a usable ISO.
     * Empty when the node may go ahead.
     */
    Optional<Outcome> beforeCordon(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<Outcome> executorCheck = upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.Script
                // What the node's Job will run is judged before the node is touched: a changed script fails here, not after a drain.
                ? (userScript(upgrade) instanceof ScriptTrust.Refused refused ? Optional.of(new NodeFailed(refused.message())) : Optional.empty())
                : cloudStackReady(upgrade, node, now);
        return executorCheck.isPresent() ? executorCheck : admitted(upgrade, node);
    }

    /**
     * The node's Job, exactly as it will be made, sent as a server-side dry run (the Job and its pod):
     * Pod Security of the namespace, quotas, limit ranges and names are judged by the API server now,
     * before the node is drained for a Job that could never run.
     */
    private Optional<Outcome> admitted(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        String namespace = settings.namespace();
        JobToRun planned = jobFor(upgrade, node, namespace);
        if (planned instanceof ScriptRefused refused) {
            return Optional.of(new NodeFailed(refused.message()));
        }
        Job job = ((Made) planned).job();
        return jobs.refusal(job).map(why -> new NodeFailed("The upgrade Job of node " + node.getName() + " would be refused by the API server: "
                + why + " Nothing was cordoned; fix the namespace " + namespace + " (for Pod Security it must allow privileged pods: "
                + "label pod-security.kubernetes.io/enforce=privileged), then retry the NodeUpgrade."));
    }

    private Optional<Outcome> cloudStackReady(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        try {
            KubernetesCluster cluster = iso.cluster(status.getClusterId(), status.getNodes().stream().map(UpgradeNodeStatus::getName).toList());
            status.setClusterId(cluster.id());
            if (CloudStackAccess.isBusy(cluster)) {
                recorder.waiting(upgrade, "CloudStackBusy", "CloudStack is changing CKS cluster " + cluster.name() + " (state " + cluster.state()
                        + "); node " + node.getName() + " is upgraded once that is over.", now);
                return Optional.of(new Continue(Step.after(RECHECK_CLOUDSTACK)));
            }
            node.setVmId(iso.choose(cluster, node.getName(), versionId(upgrade), upgrade.getSpec().getTargetVersion()).vmId());
            return Optional.empty();
        } catch (CloudStackIsoExecutor.Refused refused) {
            return Optional.of(new NodeFailed(refused.getMessage()));
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CLOUDSTACK_UNAVAILABLE, "CloudStack could not be asked about node " + node.getName()
                    + " (" + e.getMessage() + "); it is upgraded once CloudStack answers.", now);
            return Optional.of(new Continue(Step.after(RECHECK_CLOUDSTACK)));
        }
    }

    Outcome advance(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        boolean usesIso = upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.CloudStackIso;
        try {
            if (usesIso && (node.getIsoState() == null || node.getIsoState() == IsoState.Attaching)) {
                return attach(upgrade, node, now);
            }
            String namespace = settings.namespace();
            String jobName = UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), upgrade.getStatus().getRetryToken());
            Optional<Job> job = jobs.find(namespace, jobName);
            if (!usesIso || node.getIsoState() == IsoState.Attached) {
                if (job.isEmpty()) {
                    return createJob(upgrade, node, namespace, jobName, now);
                }
                if (UpgradeJob.outcome(job.get()) instanceof UpgradeJob.Running) {
                    recorder.progressing(upgrade, "Upgrading", "Upgrading node " + node.getName() + " (" + node.getAction() + ", Job " + jobName + ").", now);
                    return new Continue(Step.onEvent());
                }
                if (usesIso) {
                    // Detached whether the Job worked or not: a VM keeps no CD-ROM of ours.
                    node.setIsoState(IsoState.Detaching);
                    node.setIsoJobId(null);
                }
            }
            Optional<Outcome> detaching = usesIso ? detach(upgrade, node, now) : Optional.empty();
            return detaching.orElseGet(() -> jobOutcome(job, namespace, jobName, node));
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CLOUDSTACK_UNAVAILABLE, "CloudStack did not answer while node " + node.getName()
                    + " was being upgraded (" + e.getMessage() + "); asking again in " + RECHECK_CLOUDSTACK.toSeconds() + "s.", now);
            return new Continue(Step.after(RECHECK_CLOUDSTACK));
        }
    }

    /**
     * Before a failed node is given up: an ISO of ours still attached (or being attached) is detached
     * first. Empty when none is left; a detach CloudStack refuses is reported, not retried forever.
     */
    Optional<Step> detachBeforeGivingUp(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        if (node.getIsoState() == null || node.getIsoState() == IsoState.Detached) {
            return Optional.empty();
        }
        try {
            if (node.getIsoState() == IsoState.Attaching && node.getIsoJobId() != null) {
                AsyncJobResult attachJob = iso.poll(node.getIsoJobId());
                if (attachJob.isPending()) {
                    return Optional.of(Step.after(POLL_ISO_JOB));
                }
            }
            if (node.getIsoState() != IsoState.Detaching) {
                node.setIsoState(IsoState.Detaching);
                node.setIsoJobId(null);
            }
            Optional<Outcome> detaching = detach(upgrade, node, now);
            if (detaching.isPresent() && detaching.get() instanceof Continue pending) {
                return Optional.of(pending.step());
            }
            if (detaching.isPresent() && detaching.get() instanceof NodeFailed failed) {
                recorder.warning(upgrade, "IsoNotDetached", failed.error());
                node.setIsoState(IsoState.Detached);
            }
            return Optional.empty();
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CLOUDSTACK_UNAVAILABLE, "The ISO of failed node " + node.getName() + " is detached once CloudStack answers ("
                    + e.getMessage() + ").", now);
            return Optional.of(Step.after(RECHECK_CLOUDSTACK));
        }
    }

    private Outcome attach(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        if (node.getIsoState() == IsoState.Attaching && node.getIsoJobId() != null) {
            AsyncJobResult job = iso.poll(node.getIsoJobId());
            if (job.isPending()) {
                recorder.progressing(upgrade, "Upgrading", "Attaching ISO " + node.getIsoId() + " to VM " + node.getVmId() + " of node "
                        + node.getName() + " (CloudStack job " + node.getIsoJobId() + ").", now);
                return new Continue(Step.after(POLL_ISO_JOB));
            }
            if (job.failed()) {
                CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
                node.setIsoState(IsoState.Detached);
                return new NodeFailed("CloudStack job " + node.getIsoJobId() + " could not attach ISO " + node.getIsoId() + " to VM "
                        + node.getVmId() + " of node " + node.getName() + ": " + error.errorText() + " (error " + error.errorCode() + ").");
            }
            return attached(upgrade, node);
        }
        NodeUpgradeStatus status = upgrade.getStatus();
        KubernetesCluster cluster = iso.cluster(status.getClusterId(), status.getNodes().stream().map(UpgradeNodeStatus::getName).toList());
        status.setClusterId(cluster.id());
        CloudStackIsoExecutor.Attachment attachment;
        try {
            attachment = iso.choose(cluster, node.getName(), versionId(upgrade), upgrade.getSpec().getTargetVersion());
        } catch (CloudStackIsoExecutor.Refused refused) {
            return new NodeFailed(refused.getMessage());
        }
        Optional<String> carried = iso.attachedIso(cluster, attachment.vmId());
        if (carried.isPresent() && carried.get().equals(attachment.isoId())) {
            // Attached by a run that stopped before it heard the job id: nothing to ask again.
            node.setVmId(attachment.vmId());
            node.setIsoId(attachment.isoId());
            return attached(upgrade, node);
        }
        if (carried.isPresent()) {
            return new NodeFailed("VM " + attachment.vmId() + " of node " + node.getName() + " already has ISO " + carried.get()
                    + " attached; a VM has one CD-ROM. Detach it in CloudStack (detachIso), then retry the NodeUpgrade.");
        }
        // Intent first: a restart from here on looks at the VM before asking CloudStack again.
        node.setVmId(attachment.vmId());
        node.setIsoId(attachment.isoId());
        node.setIsoState(IsoState.Attaching);
        node.setIsoJobId(null);
        store.persist(upgrade);
        try {
            node.setIsoJobId(iso.startAttach(attachment));
        } catch (CloudStackException e) {
            if (e.kind() != CloudStackException.Kind.API_ERROR) {
                throw e;
            }
            node.setIsoState(IsoState.Detached);
            return new NodeFailed("CloudStack refused to attach ISO " + attachment.isoId() + " to VM " + attachment.vmId() + " of node "
                    + node.getName() + ": " + e.getMessage());
        }
        store.persist(upgrade);
        return new Continue(Step.after(POLL_ISO_JOB));
    }

    private Outcome attached(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        node.setIsoState(IsoState.Attached);
        node.setIsoJobId(null);
        recorder.event(upgrade, "IsoAttached", "Attached ISO " + node.getIsoId() + " to VM " + node.getVmId() + " of node " + node.getName() + ".");
        return new Continue(Step.next());
    }

    /** Empty once the ISO is detached; a Continue while CloudStack works on it; NodeFailed when CloudStack refuses. */
    private Optional<Outcome> detach(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        if (node.getIsoJobId() == null) {
            Optional<String> job;
            try {
                job = iso.startDetach(node.getVmId());
            } catch (CloudStackException e) {
                if (e.kind() != CloudStackException.Kind.API_ERROR) {
                    throw e;
                }
                return Optional.of(new NodeFailed("CloudStack refused to detach ISO " + node.getIsoId() + " from VM " + node.getVmId()
                        + " of node " + node.getName() + ": " + e.getMessage() + " Detach it in CloudStack."));
            }
            if (job.isEmpty()) {
                return detached(upgrade, node);
            }
            node.setIsoJobId(job.get());
            return Optional.of(new Continue(Step.after(POLL_ISO_JOB)));
        }
        AsyncJobResult job = iso.poll(node.getIsoJobId());
        if (job.isPending()) {
            recorder.progressing(upgrade, "Upgrading", "Detaching ISO " + node.getIsoId() + " from VM " + node.getVmId() + " of node "
                    + node.getName() + " (CloudStack job " + node.getIsoJobId() + ").", now);
            return Optional.of(new Continue(Step.after(POLL_ISO_JOB)));
        }
        if (job.failed() && !CloudStackIsoExecutor.foundNoIso(CloudStackResponses.jobError(job).errorText())) {
            CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
            return Optional.of(new NodeFailed("CloudStack job " + node.getIsoJobId() + " could not detach ISO " + node.getIsoId() + " from VM "
                    + node.getVmId() + " of node " + node.getName() + ": " + error.errorText() + " (error " + error.errorCode()
                    + "). Detach it in CloudStack."));
        }
        return detached(upgrade, node);
    }

    private Optional<Outcome> detached(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        node.setIsoState(IsoState.Detached);
        node.setIsoJobId(null);
        recorder.event(upgrade, "IsoDetached", "Detached ISO " + node.getIsoId() + " from VM " + node.getVmId() + " of node " + node.getName() + ".");
        return Optional.empty();
    }

    private Outcome jobOutcome(Optional<Job> job, String namespace, String jobName, UpgradeNodeStatus node) {
        if (job.isEmpty()) {
            return new NodeFailed("The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName()
                    + " is gone and its outcome unknown; check the node, then retry the NodeUpgrade.");
        }
        if (UpgradeJob.outcome(job.get()) instanceof UpgradeJob.Failed failed) {
            return new NodeFailed(UpgradeJob.failureMessage(namespace, jobName, node.getName(), failed, jobs.logTail(namespace, jobName)));
        }
        return new Upgraded();
    }

    private Outcome createJob(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace, String jobName, Instant now) {
        NodeUpgradeSpec spec = upgrade.getSpec();
        UpgradeExecutor executor = spec.getExecutor();
        if (jobName.equals(node.getJobName()) && node.getStepStartedAt() != null && Duration.between(Timestamps.parse(node.getStepStartedAt()), now)
                .getSeconds() > executor.getJobTimeoutSeconds() + UpgradeJob.TTL_SECONDS_AFTER_FINISHED) {
            return new NodeFailed("The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName()
                    + " is gone and its outcome unknown; check the node, then retry the NodeUpgrade.");
        }
        if (executor.getType() == UpgradeExecutor.Type.CloudStackIso) {
            jobs.writeScript(namespace, CloudStackIsoExecutor.SCRIPT_CONFIGMAP, CloudStackIsoExecutor.SCRIPT_KEY, CloudStackIsoExecutor.script());
        }
        // Judged again as the Job is made (the script may have changed during the drain); the Job runs only this digest.
        JobToRun planned = jobFor(upgrade, node, namespace);
        if (planned instanceof ScriptRefused refused) {
            return new NodeFailed(refused.message());
        }
        jobs.create(((Made) planned).job());
        node.setJobName(jobName);
        node.setStepStartedAt(Timestamps.format(now));
        recorder.event(upgrade, "Upgrading", "Started upgrade Job " + namespace + "/" + jobName + " on node " + node.getName()
                + " (" + (node.getAction() == Action.Apply ? "kubeadm upgrade apply" : "kubeadm upgrade node") + ").");
        recorder.progressing(upgrade, "Upgrading", "Upgrading node " + node.getName() + " (" + node.getAction() + ", Job " + jobName + ").", now);
        return new Continue(Step.onEvent());
    }

    /** The node's upgrade Job as it is made, or why its script may not run. */
    private sealed interface JobToRun {
    }

    private record Made(Job job) implements JobToRun {
    }

    private record ScriptRefused(String message) implements JobToRun {
    }

    private JobToRun jobFor(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace) {
        NodeUpgradeSpec spec = upgrade.getSpec();
        UpgradeExecutor executor = spec.getExecutor();
        String configMap;
        String key;
        List<String> arguments;
        ScriptTrust.Verdict script;
        if (executor.getType() == UpgradeExecutor.Type.CloudStackIso) {
            configMap = CloudStackIsoExecutor.SCRIPT_CONFIGMAP;
            key = CloudStackIsoExecutor.SCRIPT_KEY;
            script = new ScriptTrust.Trusted(ScriptTrust.sha256(CloudStackIsoExecutor.script()));
            arguments = CloudStackIsoExecutor.arguments(spec.getTargetVersion(), node.getAction());
        } else {
            configMap = executor.getScript().getConfigMapRef().getName();
            key = executor.getScript().getConfigMapRef().getKey();
            script = userScript(upgrade);
            arguments = List.of(spec.getTargetVersion(), node.getAction() == Action.Apply ? "apply" : "node");
        }
        if (script instanceof ScriptTrust.Refused refused) {
            return new ScriptRefused(refused.message());
        }
        return new Made(UpgradeJob.build(new UpgradeJob.Request(namespace, upgrade.getMetadata().getName(), upgrade.getMetadata().getUid(),
                node.getName(), upgrade.getStatus().getRetryToken(), node.getAction(), spec.getTargetVersion(), settings.upgrade().jobImage(),
                executor.getJobTimeoutSeconds(), configMap, key, arguments, ((ScriptTrust.Trusted) script).sha256())));
    }

    private ScriptTrust.Verdict userScript(NodeUpgrade upgrade) {
        UpgradeExecutor.ConfigMapKeyRef ref = upgrade.getSpec().getExecutor().getScript().getConfigMapRef();
        String namespace = settings.namespace();
        return scripts.judge(namespace, ref.getName(), ref.getKey(), jobs.configMapData(namespace, ref.getName()).orElse(null));
    }

    static String versionId(NodeUpgrade upgrade) {
        UpgradeExecutor.CloudStackIso cloudStackIso = upgrade.getSpec().getExecutor().getCloudStackIso();
        return cloudStackIso == null ? null : cloudStackIso.getKubernetesVersionId();
    }
}
