package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The {@code Upgrading} phase of one node: for CloudStackIso, attach the version's ISO (a CloudStack job,
 * polled), then the executor Job, then detach the ISO (polled) whatever the Job's outcome. Every step is
 * recorded in the node's status, so a restarted operator carries on with the same Job and ISO job.
 */
final class UpgradeJobStep {
    static final Duration RECHECK_CLOUDSTACK = Duration.ofSeconds(10);
    static final String EARLIER_JOB_RUNNING = "EarlierUpgradeJobRunning";
    static final String UPGRADE_POD_NOT_RUNNING = "UpgradePodNotRunning";
    static final String JOB_DELETED = "UpgradeJobDeleted";
    static final String PLAIN_HTTP = "PlainHttp";
    /** How long an upgrade Job's pod may take to start (an image pull among it) before the wait is named as one. */
    static final Duration POD_START_GRACE = Duration.ofMinutes(2);
    static final Duration POD_RECHECK = Duration.ofSeconds(15);
    /**
     * How long a sighting of a Job with no started pod says that none started: it is renewed every
     * {@link #POD_RECHECK} while the pod does not run, and a deleted Job wakes the upgrade at once. An older
     * one (the operator was down, or behind) says nothing about what the Job did since.
     */
    static final Duration NOT_STARTED_SIGHTING = POD_RECHECK.multipliedBy(4);

    sealed interface Outcome {
    }

    record Continue(Step step) implements Outcome {
    }

    record NodeFailed(String error) implements Outcome {
    }

    /**
     * The Job succeeded and no ISO of ours is attached any more.
     *
     * @param addons what the script did with the ISO's addon manifests: present for the first control-plane node of a CloudStackIso upgrade
     */
    record Upgraded(Optional<IsoAddons.Report> addons) implements Outcome {
    }

    /** The NodeUpgrade may not go on at all (condition Accepted=False with this reason); no node was touched. */
    record Refused(String reason, String message) implements Outcome {
    }

    private final UpgradeJobs jobs;
    private final CloudStackIsoExecutor iso;
    private final IsoAttachment isoAttachment;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final OperatorSettings settings;
    private final ScriptTrust scripts;
    private final IsoCanary isoCanary;

    UpgradeJobStep(UpgradeJobs jobs, CloudStackIsoExecutor iso, OperationRecorder recorder, StatusStore store, OperatorSettings settings) {
        this.jobs = jobs;
        this.iso = iso;
        this.isoAttachment = new IsoAttachment(iso, recorder, store, RECHECK_CLOUDSTACK, IsoAttachment.UPGRADE_ATTACH, IsoAttachment.UPGRADE_DETACH);
        this.isoCanary = new IsoCanary(jobs, iso, recorder, store, settings);
        this.recorder = recorder;
        this.store = store;
        this.settings = settings;
        this.scripts = new ScriptTrust(settings.upgrade().scriptSha256().orElse(Set.of()));
    }

    /**
     * Before the node is locked and cordoned, a node is never drained for an upgrade that cannot run:
     * Script — the script is one the operator's configuration allows (docs/security.md); CloudStackIso —
     * CloudStack is not changing the cluster itself, the keys may call what the upgrade sends, the node has a VM
     * and the target a usable ISO, and that ISO passed the {@link IsoCanary} (checked once, on the first node).
     * Empty when the node may go ahead.
     */
    Optional<Outcome> beforeCordon(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        Optional<Outcome> earlier = earlierJobRunning(upgrade, node, now);
        if (earlier.isPresent()) {
            return earlier;
        }
        Optional<Outcome> executorCheck = upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.Script
                // What the node's Job will run is judged before the node is touched: a changed script fails here, not after a drain.
                ? (userScript(upgrade) instanceof ScriptTrust.Refused refused ? Optional.of(new NodeFailed(refused.message())) : Optional.empty())
                : cloudStackReady(upgrade, node, now);
        if (executorCheck.isPresent()) {
            return executorCheck;
        }
        Optional<Outcome> admission = admitted(upgrade, node);
        return admission.isPresent() || upgrade.getSpec().getExecutor().getType() != UpgradeExecutor.Type.CloudStackIso
                || !settings.upgrade().isoCanary() ? admission : canaryPassed(upgrade, node, now);
    }

    private Optional<Outcome> canaryPassed(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        try {
            return isoCanary.check(upgrade, node, now);
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CloudStackWait.reason(e), "CloudStack did not answer while the ISO canary ran on node " + node.getName()
                    + " (" + e.getMessage() + "); asking again in " + RECHECK_CLOUDSTACK.toSeconds() + "s. Nothing is cordoned meanwhile.", now);
            return Optional.of(new Continue(Step.after(RECHECK_CLOUDSTACK)));
        }
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
            warnOfPlainHttp(upgrade, now);
            if (CloudStackAccess.isBusy(cluster)) {
                recorder.waiting(upgrade, "CloudStackBusy", "CloudStack is changing CKS cluster " + cluster.name() + " (state " + cluster.state()
                        + "); node " + node.getName() + " is upgraded once that is over.", now);
                return Optional.of(new Continue(Step.after(RECHECK_CLOUDSTACK)));
            }
            Optional<String> notAllowed = iso.permissionRefusal("NodeUpgrade " + upgrade.getMetadata().getName());
            if (notAllowed.isPresent()) {
                return Optional.of(new NodeFailed(notAllowed.get()));
            }
            node.setVmId(iso.choose(cluster, node.getName(), versionId(upgrade), upgrade.getSpec().getTargetVersion()).vmId());
            return Optional.empty();
        } catch (CloudStackIsoExecutor.Refused refused) {
            return Optional.of(new NodeFailed(refused.getMessage()));
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CloudStackWait.reason(e), "CloudStack could not be asked about node " + node.getName()
                    + " (" + e.getMessage() + "); it is upgraded once CloudStack answers.", now);
            return Optional.of(new Continue(Step.after(RECHECK_CLOUDSTACK)));
        }
    }

    /** Plain http is warned about (a Warning condition, and one event when it first shows), not refused: TLS is the Secret's choice. */
    private void warnOfPlainHttp(NodeUpgrade upgrade, Instant now) {
        Optional<String> warning = iso.plainHttpWarning();
        List<Condition> conditions = upgrade.getStatus().getConditions();
        if (warning.isEmpty()) {
            Conditions.remove(conditions, Conditions.CLOUDSTACK_TLS);
            return;
        }
        if (Conditions.find(conditions, Conditions.CLOUDSTACK_TLS).isEmpty()) {
            recorder.warning(upgrade, PLAIN_HTTP, warning.get());
        }
        recorder.condition(upgrade, Conditions.CLOUDSTACK_TLS, false, PLAIN_HTTP, warning.get(), now);
    }

    Outcome advance(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        boolean usesIso = upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.CloudStackIso;
        try {
            if (usesIso && (node.getIsoState() == null || node.getIsoState() == IsoState.Attaching)) {
                return isoAttachment.attach(upgrade, node, now);
            }
            String namespace = settings.namespace();
            String jobName = UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), attemptKey(upgrade, node));
            Optional<Job> job = jobs.find(namespace, jobName);
            if (job.isPresent() && node.getJobName() == null) {
                // Made by a process that stopped before it could record it (killed right after creating it):
                // recorded now as that process would have, so status, events and the pod's start grace name it.
                recordJob(upgrade, node, namespace, jobName, Timestamps.parse(job.get().getMetadata().getCreationTimestamp()), now);
            }
            if (!usesIso || node.getIsoState() == IsoState.Attached) {
                if (job.isEmpty()) {
                    return createJob(upgrade, node, namespace, jobName, now);
                }
                if (UpgradeJob.outcome(job.get()) instanceof UpgradeJob.Running) {
                    return jobRuns(upgrade, node, job.get(), now);
                }
                if (usesIso) {
                    // Detached whether the Job worked or not: a VM keeps no CD-ROM of ours.
                    IsoAttachment.startDetaching(node);
                }
            }
            Optional<Outcome> detaching = usesIso ? isoAttachment.detach(upgrade, node, now) : Optional.empty();
            return detaching.orElseGet(() -> jobOutcome(job, namespace, jobName, node, usesIso));
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CloudStackWait.reason(e), "CloudStack did not answer while node " + node.getName()
                    + " was being upgraded (" + e.getMessage() + "); asking again in " + RECHECK_CLOUDSTACK.toSeconds() + "s.", now);
            return new Continue(Step.after(RECHECK_CLOUDSTACK));
        }
    }

    /**
     * At the end of an upgrade (either executor): whether CloudStack still records the old versions (condition
     * CloudStackRecordCurrent). Returns the sentence for the final message when it does. A CloudStack that
     * cannot be read leaves the condition Unknown; the upgrade's outcome does not depend on it. A Script upgrade
     * may run where no CloudStack keys are configured: then there is no record to compare and no condition.
     */
    Optional<String> checkCloudStackRecord(NodeUpgrade upgrade, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        boolean usesIso = upgrade.getSpec().getExecutor().getType() == UpgradeExecutor.Type.CloudStackIso;
        if (usesIso && status.getClusterId() == null) {
            return Optional.empty();
        }
        try {
            Optional<String> stale = iso.staleRecord(status.getClusterId(), status.getNodes().stream().map(UpgradeNodeStatus::getName).toList(),
                    upgrade.getSpec().getTargetVersion());
            recorder.condition(upgrade, Conditions.CLOUDSTACK_RECORD_CURRENT, stale.isEmpty(), stale.isPresent() ? "VersionRecordStale" : "VersionRecorded",
                    stale.orElse("CloudStack records " + upgrade.getSpec().getTargetVersion() + " for the cluster and its upgraded nodes."), now);
            return stale;
        } catch (CloudStackAccess.Unavailable e) {
            if (!usesIso) {
                // No keys (or none usable): nothing to compare; a condition left from an earlier check would say something stale.
                Conditions.remove(status.getConditions(), Conditions.CLOUDSTACK_RECORD_CURRENT);
                return Optional.empty();
            }
            return unreadRecord(upgrade, e, now);
        } catch (CloudStackException | CloudStackIsoExecutor.Refused e) {
            return unreadRecord(upgrade, e, now);
        }
    }

    private Optional<String> unreadRecord(NodeUpgrade upgrade, RuntimeException e, Instant now) {
        recorder.condition(upgrade, Conditions.CLOUDSTACK_RECORD_CURRENT, null, CloudStackWait.reason(e),
                "CloudStack's recorded versions could not be read (" + e.getMessage() + "); VMMapAudit's VersionRecordStale findings show them.", now);
        return Optional.empty();
    }

    /**
     * Before a failed node is given up: an ISO of ours still attached (or being attached) is detached
     * first. Empty when none is left.
     */
    Optional<Step> detachBeforeGivingUp(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        try {
            Optional<Step> canary = isoCanary.detachBeforeGivingUp(upgrade, node, now);
            return canary.isPresent() ? canary : isoAttachment.detachBeforeGivingUp(upgrade, node, now);
        } catch (CloudStackAccess.Unavailable | CloudStackException e) {
            recorder.waiting(upgrade, CloudStackWait.reason(e), "The ISO of failed node " + node.getName() + " is detached once CloudStack answers ("
                    + e.getMessage() + ").", now);
            return Optional.of(Step.after(RECHECK_CLOUDSTACK));
        }
    }

    /**
     * The Job is active: its end (a Job event) moves the node on. Until its pod runs, the pod is looked at
     * every {@link #POD_RECHECK} (a pod's changes do not wake the upgrade), and a pod that cannot start, or
     * has not started within {@link #POD_START_GRACE}, is named in the Waiting condition: otherwise the node
     * would sit cordoned in Upgrading, saying nothing, until the Job's activeDeadlineSeconds.
     */
    private Outcome jobRuns(NodeUpgrade upgrade, UpgradeNodeStatus node, Job job, Instant now) {
        String namespace = job.getMetadata().getNamespace();
        String jobName = job.getMetadata().getName();
        String upgrading = "Upgrading node " + node.getName() + " (" + node.getAction() + ", Job " + jobName + ")";
        UpgradePod.State pod = UpgradePod.startedByJobStatus(job) ? new UpgradePod.Started()
                : UpgradePod.of(jobs.pods(namespace, jobName), () -> jobs.failedCreate(namespace, jobName));
        if (!(pod instanceof UpgradePod.NotRunning notRunning)) {
            if (node.getJobPodStartedAt() == null) {
                node.setJobPodStartedAt(Timestamps.format(now));
            }
            recorder.progressing(upgrade, "Upgrading", upgrading + ".", now);
            return new Continue(Step.onEvent());
        }
        node.setJobPodNotStartedAt(Timestamps.format(now));
        Instant since = node.getStepStartedAt() == null ? now : Timestamps.parse(node.getStepStartedAt());
        if (notRunning.stuck() || !now.isBefore(since.plus(POD_START_GRACE))) {
            recorder.waiting(upgrade, UPGRADE_POD_NOT_RUNNING, "The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName()
                    + " has not run since " + Timestamps.format(since) + ": " + notRunning.why() + ". The node stays cordoned; if the pod never runs,"
                    + " the Job fails after its " + upgrade.getSpec().getExecutor().getJobTimeoutSeconds() + " s (jobTimeoutSeconds) and the node is given back.", now);
        } else {
            recorder.progressing(upgrade, "Upgrading", upgrading + ": " + notRunning.why() + ".", now);
        }
        return new Continue(Step.after(POD_RECHECK));
    }

    private Outcome jobOutcome(Optional<Job> job, String namespace, String jobName, UpgradeNodeStatus node, boolean usesIso) {
        if (job.isEmpty()) {
            return new NodeFailed("The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName()
                    + " is gone and its outcome unknown; check the node, then retry the NodeUpgrade.");
        }
        if (UpgradeJob.outcome(job.get()) instanceof UpgradeJob.Failed failed) {
            return new NodeFailed(UpgradeJob.failureMessage(namespace, jobName, node.getName(), failed, jobs.logTail(namespace, jobName)));
        }
        // Only the operator's own script applies the ISO's addons, and only where it ran `kubeadm upgrade apply`.
        return new Upgraded(usesIso && node.getAction() == Action.Apply ? Optional.of(IsoAddons.parse(jobs.logTail(namespace, jobName)))
                : Optional.empty());
    }

    private Outcome createJob(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace, String jobName, Instant now) {
        NodeUpgradeSpec spec = upgrade.getSpec();
        UpgradeExecutor executor = spec.getExecutor();
        if (jobName.equals(node.getJobName())) {
            Optional<Outcome> deleted = jobDeleted(upgrade, node, namespace, jobName, now);
            if (deleted.isPresent()) {
                return deleted.get();
            }
        }
        if (executor.getType() == UpgradeExecutor.Type.CloudStackIso) {
            jobs.writeScripts(namespace, CloudStackIsoExecutor.SCRIPT_CONFIGMAP, CloudStackIsoExecutor.scripts());
            KillPoint.NODEUPGRADE_SCRIPT_WRITTEN.reached();
        }
        // Judged again as the Job is made (the script may have changed during the drain); the Job runs only this digest.
        JobToRun planned = jobFor(upgrade, node, namespace);
        if (planned instanceof ScriptRefused refused) {
            return new NodeFailed(refused.message());
        }
        Optional<Outcome> earlier = earlierJobRunning(upgrade, node, now);
        if (earlier.isPresent()) {
            return earlier.get();
        }
        jobs.create(((Made) planned).job());
        KillPoint.NODEUPGRADE_JOB_CREATED.reached();
        recordJob(upgrade, node, namespace, jobName, now, now);
        return new Continue(Step.onEvent());
    }

    private void recordJob(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace, String jobName, Instant created, Instant now) {
        node.setJobName(jobName);
        node.setJobPodStartedAt(null);
        node.setJobPodNotStartedAt(null);
        node.setStepStartedAt(Timestamps.format(created == null ? now : created));
        recorder.nodeEvent(upgrade, node.getName(), "Upgrading", "Started upgrade Job " + namespace + "/" + jobName + " on node " + node.getName()
                + " (" + (node.getAction() == Action.Apply ? "kubeadm upgrade apply" : "kubeadm upgrade node") + ").");
        recorder.progressing(upgrade, "Upgrading", "Upgrading node " + node.getName() + " (" + node.getAction() + ", Job " + jobName + ").", now);
    }

    /**
     * This run's Job of the node was made and is gone before the operator saw it end: deleted by a person or a
     * tool, or removed by its TTL while the operator was down. It is made again only where the operator saw,
     * shortly before, that no pod of it had started (and none of its pods, if still there, says otherwise): a
     * pod that started may have run kubeadm, completely or half-way, and only a person can tell which. Empty
     * when it is made again.
     */
    private Optional<Outcome> jobDeleted(NodeUpgrade upgrade, UpgradeNodeStatus node, String namespace, String jobName, Instant now) {
        String job = "The upgrade Job " + namespace + "/" + jobName + " of node " + node.getName();
        Instant notStartedAt = Timestamps.parse(node.getJobPodNotStartedAt());
        boolean noneStarted = node.getJobPodStartedAt() == null && notStartedAt != null && !now.isAfter(notStartedAt.plus(NOT_STARTED_SIGHTING))
                && !(UpgradePod.of(jobs.pods(namespace, jobName), Optional::empty) instanceof UpgradePod.Started);
        if (noneStarted) {
            recorder.warning(upgrade, JOB_DELETED, job + " was deleted; no pod of it had started (seen at " + node.getJobPodNotStartedAt()
                    + "), so kubeadm did not run: it is made again.");
            return Optional.empty();
        }
        String seen = node.getJobPodStartedAt() != null ? "a pod of it started at " + node.getJobPodStartedAt()
                : notStartedAt == null ? "the operator never saw whether a pod of it started"
                : "the operator last saw it at " + node.getJobPodNotStartedAt() + " with no pod started, too long ago to know what it did since";
        String error = job + " was deleted; kubeadm may have run (" + seen + "), completely or half-way, so it is not run again on its own. Check the node:"
                + " its kubelet's version (kubectl get node " + node.getName() + "), `kubeadm version` and /etc/kubernetes on it, the Job's pod log if it"
                + " is still there; repair what is half-done, then retry with: kubectl annotate nu " + upgrade.getMetadata().getName() + " "
                + NodeAnnotations.RETRY + "=$(date +%s) --overwrite";
        recorder.warning(upgrade, JOB_DELETED, error);
        return Optional.of(new NodeFailed(error));
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
            arguments = CloudStackIsoExecutor.arguments(spec.getTargetVersion(), node.getAction(),
                    executor.getCloudStackIso() == null || executor.getCloudStackIso().appliesAddons());
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
                node.getName(), attemptKey(upgrade, node), node.getAction(), spec.getTargetVersion(), UpgradeJob.Runtime.of(settings.upgrade()),
                executor.getJobTimeoutSeconds(), configMap, key, arguments, ((ScriptTrust.Trusted) script).sha256())));
    }

    /**
     * What tells this node's Job apart from the node's earlier Jobs of the same NodeUpgrade (kept 24 h after they end): the
     * retry token, and for a node a Continuous NodeUpgrade upgrades again (a correction, a rollout to a new target) the
     * attempt recorded in its status before its Job is made, so a restarted operator finds that Job under the same name.
     */
    static String attemptKey(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        String retry = upgrade.getStatus().getRetryToken();
        return node.getAttempt() == null ? retry : (retry == null ? "" : retry) + "/" + node.getAttempt();
    }

    /** Whether this run's upgrade Job of the node exists, recorded in status or not. */
    boolean jobExists(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        return jobs.find(settings.namespace(), UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), attemptKey(upgrade, node)))
                .isPresent();
    }

    /**
     * The node's upgrade Job, if it still runs, orphaned so that deleting the NodeUpgrade does not delete it; its name.
     * Only a Job made by an earlier operator carries an owner reference; for the others the patch changes nothing.
     */
    Optional<String> orphanRunningJob(NodeUpgrade upgrade, UpgradeNodeStatus node) {
        String name = UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), attemptKey(upgrade, node));
        Optional<Job> job = jobs.find(settings.namespace(), name).filter(found -> UpgradeJob.outcome(found) instanceof UpgradeJob.Running);
        job.ifPresent(running -> jobs.orphan(settings.namespace(), name));
        return job.map(running -> settings.namespace() + "/" + name);
    }

    /**
     * The finished upgrade Jobs of a deleted NodeUpgrade, deleted: they carry no owner reference for the garbage
     * collector to follow ({@link UpgradeJob#build}). A running one is left to end (its TTL removes it).
     */
    void deleteFinishedJobs(NodeUpgrade upgrade) {
        String name = upgrade.getMetadata().getName();
        upgrade.getStatus().getNodes().stream().flatMap(node -> jobs.onNode(settings.namespace(), node.getName()).stream())
                .filter(job -> UpgradeJob.nodeUpgradeOf(job).filter(name::equals).isPresent() && !(UpgradeJob.outcome(job) instanceof UpgradeJob.Running))
                .forEach(job -> jobs.delete(settings.namespace(), job.getMetadata().getName()));
    }

    /**
     * An upgrade Job of another run (an earlier retry, a deleted NodeUpgrade whose Job was left running)
     * still runs on the node: a second privileged upgrade is never started beside it. Waits until it ends.
     */
    private Optional<Outcome> earlierJobRunning(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        String ours = UpgradeJob.name(upgrade.getMetadata().getUid(), node.getName(), attemptKey(upgrade, node));
        return jobs.onNode(settings.namespace(), node.getName()).stream()
                .filter(job -> !job.getMetadata().getName().equals(ours) && UpgradeJob.outcome(job) instanceof UpgradeJob.Running)
                .findFirst().map(job -> {
                    recorder.waiting(upgrade, EARLIER_JOB_RUNNING, "Upgrade Job " + settings.namespace() + "/" + job.getMetadata().getName()
                            + " of an earlier run still runs on node " + node.getName() + "; no second upgrade starts on it before that one has ended.", now);
                    return new Continue(Step.onEvent());
                });
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
