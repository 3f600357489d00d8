package dev.cks.nodeops.upgrade;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.VersionMatch;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.IsoCanaryStatus.Verdict;
import dev.cks.nodeops.upgrade.UpgradeJobStep.Continue;
import dev.cks.nodeops.upgrade.UpgradeJobStep.NodeFailed;
import dev.cks.nodeops.upgrade.UpgradeJobStep.Outcome;
import dev.cks.nodeops.upgrade.UpgradeJobStep.Refused;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The ISO canary of the CloudStackIso executor (docs/upgrade.md, "ISO canary"): before the first node is cordoned,
 * the target's binaries ISO is attached to that node's VM, a read-only Job ({@code verify-iso.sh}) checks it there,
 * and it is detached again; only then does the upgrade touch a node. A bad ISO refuses the NodeUpgrade while every
 * node still serves, where without it the first node would be drained before its upgrade Job found the ISO wanting.
 * The verdict is kept in {@code status.isoCanary} (and condition IsoVerified): a restarted operator reads it and
 * does not check again; a retry after a failed check checks again, as does a Continuous NodeUpgrade's new target.
 * Its attach and detach are {@link IsoAttachment}'s, with kill points of their own.
 */
final class IsoCanary {
    static final String ISO_REFUSED = "IsoRefused";
    static final String ISO_PASSED = "IsoPassed";
    static final String CHECKING = "IsoCanary";
    static final String CANARY_MOVED = "IsoCanaryMoved";
    static final String CANARY_JOB_DELETED = "IsoCanaryJobDeleted";
    /**
     * The addons kubeadm deploys whose images its list names, by image name, with the k8s-app label kubeadm's
     * manifests give their pods. kubeadm upgrades an addon only where the cluster has it (it skips an addon whose
     * ConfigMap is missing: kubernetes cmd/kubeadm/app/phases/upgrade/postupgrade.go), so an ISO without the image of
     * an addon the cluster runs none of is complete for it.
     */
    private static final Map<String, String> ADDONS = Map.of("coredns", "kube-dns", "kube-proxy", "kube-proxy");
    private static final String ADDON_NAMESPACE = "kube-system";

    private final UpgradeJobs jobs;
    private final IsoAttachment attachment;
    private final OperationRecorder recorder;
    private final OperatorSettings settings;

    IsoCanary(UpgradeJobs jobs, CloudStackIsoExecutor iso, OperationRecorder recorder, StatusStore store, OperatorSettings settings) {
        this.jobs = jobs;
        this.attachment = new IsoAttachment(iso, recorder, store, UpgradeJobStep.RECHECK_CLOUDSTACK, IsoAttachment.CANARY_ATTACH,
                IsoAttachment.CANARY_DETACH);
        this.recorder = recorder;
        this.settings = settings;
    }

    /**
     * Before {@code node} is locked and cordoned: empty once the target's ISO passed; else what the node does now
     * (wait for the canary, or the NodeUpgrade is refused). The canary runs on the first node that gets here.
     */
    Optional<Outcome> check(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        NodeUpgradeStatus status = upgrade.getStatus();
        String target = upgrade.getSpec().getTargetVersion();
        IsoCanaryStatus canary = status.getIsoCanary();
        if (canary == null || canary.isOver() && !target.equals(canary.getTargetVersion())) {
            canary = new IsoCanaryStatus(node.getName(), target);
            status.setIsoCanary(canary);
        }
        if (canary.isOver()) {
            return canary.getVerdict() == Verdict.Passed ? Optional.empty() : Optional.of(refusal(upgrade, canary));
        }
        if (!canary.getNode().equals(node.getName())) {
            IsoCanaryHandover.Decision handover = IsoCanaryHandover.decide(canary, node.getName(), status.getNodes());
            if (handover instanceof IsoCanaryHandover.Wait) {
                // One canary per NodeUpgrade and target: the other nodes wait for its verdict.
                return Optional.of(new Continue(Step.after(UpgradeJobStep.RECHECK_CLOUDSTACK)));
            }
            if (handover instanceof IsoCanaryHandover.DetachFirst detach) {
                Optional<Step> detaching = giveUp(upgrade, canary, now);
                if (detaching.isPresent()) {
                    recorder.progressing(upgrade, CHECKING, "Detaching ISO " + canary.getIsoId() + " from VM " + canary.getVmId() + " of node "
                            + canary.getNode() + ", whose ISO canary is given up (" + detach.why() + "); the canary starts again on node "
                            + node.getName() + ".", now);
                    return Optional.of(new Continue(detaching.get()));
                }
                handover = IsoCanaryHandover.decide(canary, node.getName(), status.getNodes());
            }
            if (handover instanceof IsoCanaryHandover.MoveTo move) {
                canary = moveTo(upgrade, canary, node, move.why());
            }
        }
        return advance(upgrade, node, canary, now);
    }

    /**
     * The canary starts again on {@code node}: its former node is no longer upgraded and keeps no ISO of the canary's.
     * Only status changes (the former Job's delete is idempotent), so a process killed here does it again from the same record.
     */
    private IsoCanaryStatus moveTo(NodeUpgrade upgrade, IsoCanaryStatus former, UpgradeNodeStatus node, String why) {
        deleteJob(former);
        IsoCanaryStatus canary = new IsoCanaryStatus(node.getName(), former.getTargetVersion());
        upgrade.getStatus().setIsoCanary(canary);
        recorder.warning(upgrade, CANARY_MOVED, "The ISO canary of " + former.getTargetVersion() + " on node " + former.getNode()
                + " is given up before its verdict: " + why + ". It starts again on node " + node.getName() + "; nothing was cordoned.");
        return canary;
    }

    /** Its ISO off the VM (an attach under way ended first), then its Job deleted. Empty once both are done. */
    private Optional<Step> giveUp(NodeUpgrade upgrade, IsoCanaryStatus canary, Instant now) {
        Optional<Step> detaching = attachment.detachBeforeGivingUp(upgrade, canary, now);
        if (detaching.isEmpty()) {
            deleteJob(canary);
        }
        return detaching;
    }

    private void deleteJob(IsoCanaryStatus canary) {
        if (canary.getJobName() != null) {
            jobs.delete(settings.namespace(), canary.getJobName());
            KillPoint.NODEUPGRADE_CANARY_JOB_DELETED.reached();
        }
    }

    private Optional<Outcome> advance(NodeUpgrade upgrade, UpgradeNodeStatus node, IsoCanaryStatus canary, Instant now) {
        String onNode = "node " + canary.getNode();
        if (canary.getIsoState() == null || canary.getIsoState() == IsoState.Attaching) {
            Outcome attached = attachment.attach(upgrade, canary, now);
            if (attached instanceof NodeFailed failed) {
                return Optional.of(new NodeFailed("The ISO canary could not attach the ISO of " + canary.getTargetVersion() + " to " + onNode + ": "
                        + failed.error() + " Nothing was cordoned."));
            }
            if (canary.getIsoState() != IsoState.Attached) {
                recorder.progressing(upgrade, CHECKING, "Attaching ISO " + canary.getIsoId() + " of " + canary.getTargetVersion() + " to " + onNode
                        + ", to check it before any node is cordoned.", now);
                return Optional.of(attached);
            }
        }
        if (canary.getIsoState() == IsoState.Attached) {
            Optional<Outcome> judging = judge(upgrade, node, canary, now);
            if (judging.isPresent()) {
                return judging;
            }
            IsoAttachment.startDetaching(canary);
        }
        // Detached already where the canary's node was given up after its verdict was read.
        Optional<Outcome> detaching = canary.getIsoState() == IsoState.Detached ? Optional.empty() : attachment.detach(upgrade, canary, now);
        if (detaching.isPresent() && detaching.get() instanceof NodeFailed failed) {
            // CloudStack's answer: reported, not asked again (as a failed node's detach).
            recorder.warning(upgrade, "IsoNotDetached", failed.error());
            canary.setIsoState(IsoState.Detached);
            return Optional.of(new NodeFailed("The ISO canary could not detach ISO " + canary.getIsoId() + " from " + onNode + ": " + failed.error()
                    + " Nothing was cordoned."));
        }
        if (detaching.isPresent()) {
            return detaching;
        }
        canary.setCompletedAt(Timestamps.format(now));
        String checkedOn = "ISO " + canary.getIsoId() + " of " + canary.getTargetVersion() + " checked on " + onNode + " (Job "
                + settings.namespace() + "/" + canary.getJobName() + ")";
        if (canary.getVerdict() == Verdict.Passed) {
            String message = checkedOn + ": passed. " + String.join("; ", canary.getChecked()) + ".";
            recorder.condition(upgrade, Conditions.ISO_VERIFIED, true, ISO_PASSED, message, now);
            recorder.event(upgrade, ISO_PASSED, message);
            return Optional.empty();
        }
        recorder.condition(upgrade, Conditions.ISO_VERIFIED, false, ISO_REFUSED, checkedOn + ": " + String.join("; ", canary.getProblems()) + ".", now);
        return Optional.of(refusal(upgrade, canary));
    }

    /** The canary's Job: made once, then its log read for the verdict once it has ended. Empty once the verdict is in status. */
    private Optional<Outcome> judge(NodeUpgrade upgrade, UpgradeNodeStatus node, IsoCanaryStatus canary, Instant now) {
        if (canary.getVerdict() != null) {
            return Optional.empty();
        }
        String namespace = settings.namespace();
        boolean rerun = jobName(upgrade, canary, true).equals(canary.getJobName());
        String jobName = jobName(upgrade, canary, rerun);
        Optional<Job> job = jobs.find(namespace, jobName).filter(found -> !deletedBeforeItsEnd(found));
        if (job.isEmpty() && jobName.equals(canary.getJobName())) {
            Optional<Outcome> deleted = jobDeleted(upgrade, canary, namespace, jobName, rerun, now);
            if (deleted.isPresent()) {
                return deleted;
            }
            rerun = true;
            jobName = jobName(upgrade, canary, true);
            job = jobs.find(namespace, jobName);
        }
        String checking = "Checking ISO " + canary.getIsoId() + " of " + canary.getTargetVersion() + " on node " + canary.getNode() + " (Job "
                + namespace + "/" + jobName + ") before any node is cordoned.";
        if (job.isEmpty()) {
            jobs.writeScripts(namespace, CloudStackIsoExecutor.SCRIPT_CONFIGMAP, CloudStackIsoExecutor.scripts());
            jobs.create(UpgradeJob.build(request(upgrade, node, canary, namespace, rerun), UpgradeJob.Purpose.ISO_CANARY));
            KillPoint.NODEUPGRADE_CANARY_JOB_CREATED.reached();
            canary.setJobName(jobName);
            recorder.progressing(upgrade, CHECKING, checking, now);
            return Optional.of(new Continue(Step.after(UpgradeJobStep.POD_RECHECK)));
        }
        // Also a Job made by a process killed before it could record it.
        canary.setJobName(jobName);
        UpgradeJob.Outcome outcome = UpgradeJob.outcome(job.get());
        if (outcome instanceof UpgradeJob.Running) {
            recorder.progressing(upgrade, CHECKING, checking, now);
            // Its end wakes the upgrade (a Job event); the recheck catches a pod that never starts until the Job's deadline.
            return Optional.of(new Continue(Step.after(UpgradeJobStep.POD_RECHECK)));
        }
        String log = jobs.logTail(namespace, jobName);
        IsoVerdict verdict = IsoVerdict.read(log);
        KillPoint.NODEUPGRADE_CANARY_VERDICT_READ.reached();
        canary.setChecked(new ArrayList<>(verdict.checked()));
        if (verdict.result() == IsoVerdict.Result.Passed && outcome instanceof UpgradeJob.Succeeded) {
            canary.setVerdict(Verdict.Passed);
            canary.setProblems(new ArrayList<>());
        } else {
            canary.setVerdict(Verdict.Failed);
            canary.setProblems(new ArrayList<>(verdict.result() == IsoVerdict.Result.Failed ? verdict.problems() : List.of(noVerdict(outcome, log))));
        }
        return Optional.empty();
    }

    /**
     * Being deleted while it runs: a person's kubectl delete job, or a GitOps prune with foreground deletion, which leaves
     * the Job in place until its pods are gone. Its pod is killed before it judged the ISO: it is as good as gone.
     */
    private static boolean deletedBeforeItsEnd(Job job) {
        return job.getMetadata().getDeletionTimestamp() != null && UpgradeJob.outcome(job) instanceof UpgradeJob.Running;
    }

    /**
     * The canary's Job, recorded as made, was deleted before its verdict was read (a person, a GitOps prune, or its TTL
     * while the operator was down): the verdict is unknown. The check only reads, so it runs once more, under a name of
     * its own (the deleted one may linger under foreground deletion); the ISO stays on the VM meanwhile. A second Job
     * deleted too is not made a third time: something keeps deleting them, and the ISO is not used unjudged. Empty when
     * it runs once more.
     */
    private Optional<Outcome> jobDeleted(NodeUpgrade upgrade, IsoCanaryStatus canary, String namespace, String jobName, boolean rerun, Instant now) {
        String deleted = "The ISO canary's Job " + namespace + "/" + jobName + " on node " + canary.getNode() + " was deleted before its verdict"
                + " was read (kubectl delete job, a GitOps prune, or its TTL while the operator was down)";
        if (!rerun) {
            recorder.warning(upgrade, CANARY_JOB_DELETED, deleted + "; it only reads the ISO, so it runs once more, as Job " + namespace + "/"
                    + jobName(upgrade, canary, true) + ".");
            return Optional.empty();
        }
        String error = deleted + ", as was the one before it, so the verdict is unknown and the ISO " + canary.getIsoId() + " of "
                + canary.getTargetVersion() + " is not used. Nothing was cordoned. Keep the Jobs labelled " + UpgradeJob.LABEL_ISO_CANARY
                + " in namespace " + namespace + " from being deleted (a GitOps tool's prune), then retry with: kubectl annotate nu "
                + upgrade.getMetadata().getName() + " " + NodeAnnotations.RETRY + "=$(date +%s) --overwrite";
        recorder.warning(upgrade, CANARY_JOB_DELETED, error);
        recorder.condition(upgrade, Conditions.ISO_VERIFIED, null, CANARY_JOB_DELETED, error, now);
        return Optional.of(new NodeFailed(error));
    }

    /** The script stopped before it judged the ISO (or its log is gone): the ISO is not taken as good on a guess. */
    private static String noVerdict(UpgradeJob.Outcome outcome, String log) {
        String how = outcome instanceof UpgradeJob.Failed failed ? "failed" + (failed.reason() == null ? "" : " (" + failed.reason() + ")") : "ended";
        String tail = log == null || log.isBlank() ? "no log of it could be read" : "its log ends: " + lastLine(log);
        return "verification: the Job " + how + " without a verdict, " + tail;
    }

    private static String lastLine(String log) {
        String[] lines = log.strip().split("\n");
        return lines[lines.length - 1].strip();
    }

    private UpgradeJob.Request request(NodeUpgrade upgrade, UpgradeNodeStatus node, IsoCanaryStatus canary, String namespace, boolean rerun) {
        String target = canary.getTargetVersion();
        List<String> arguments = new ArrayList<>(List.of(VersionMatch.normalize(target).orElse(target)));
        ADDONS.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .filter(addon -> !jobs.anyPod(ADDON_NAMESPACE, "k8s-app", addon.getValue()))
                .forEach(addon -> arguments.addAll(List.of("--without", addon.getKey())));
        return new UpgradeJob.Request(namespace, upgrade.getMetadata().getName(), upgrade.getMetadata().getUid(), canary.getNode(),
                attemptKey(upgrade, canary, rerun), node.getAction(), target, UpgradeJob.Runtime.of(settings.upgrade()),
                upgrade.getSpec().getExecutor().getJobTimeoutSeconds(), CloudStackIsoExecutor.SCRIPT_CONFIGMAP, CloudStackIsoExecutor.CANARY_KEY,
                arguments, ScriptTrust.sha256(CloudStackIsoExecutor.canaryScript()));
    }

    /**
     * A canary of its own for each target and retry, so that a check after a retry never reads the verdict of the one
     * before; and one more for the check run once more after its Job was deleted.
     */
    private static String attemptKey(NodeUpgrade upgrade, IsoCanaryStatus canary, boolean rerun) {
        String retry = upgrade.getStatus().getRetryToken();
        return canary.getTargetVersion() + "/" + (retry == null ? "" : retry) + (rerun ? "/rerun" : "");
    }

    private static String jobName(NodeUpgrade upgrade, IsoCanaryStatus canary, boolean rerun) {
        return UpgradeJob.name(UpgradeJob.Purpose.ISO_CANARY, upgrade.getMetadata().getUid(), canary.getNode(), attemptKey(upgrade, canary, rerun));
    }

    private Refused refusal(NodeUpgrade upgrade, IsoCanaryStatus canary) {
        String name = upgrade.getMetadata().getName();
        return new Refused(ISO_REFUSED, "The binaries ISO " + canary.getIsoId() + " of " + canary.getTargetVersion() + " failed the ISO canary on node "
                + canary.getNode() + ": " + String.join("; ", canary.getProblems()) + ". Nothing was cordoned. Register a complete ISO for "
                + canary.getTargetVersion() + " in CloudStack (addKubernetesSupportedVersion), then retry with: kubectl annotate nu " + name + " "
                + NodeAnnotations.RETRY + "=$(date +%s) --overwrite");
    }

    /**
     * Before the canary's node is given up (its Node deleted, it opts out or left the selector, the deadline, a deleted
     * NodeUpgrade): an ISO of the canary's on it comes off first, then the canary's Job goes.
     */
    Optional<Step> detachBeforeGivingUp(NodeUpgrade upgrade, UpgradeNodeStatus node, Instant now) {
        IsoCanaryStatus canary = upgrade.getStatus().getIsoCanary();
        if (canary == null || canary.isOver() || !node.getName().equals(canary.getNode())) {
            return Optional.empty();
        }
        return giveUp(upgrade, canary, now);
    }

    /**
     * A retry checks again after a failed (or unfinished) canary; a passed one stands for its target. A record whose ISO
     * may still be on the VM is kept, so that it is detached, never forgotten.
     */
    static void startOver(NodeUpgradeStatus status) {
        IsoCanaryStatus canary = status.getIsoCanary();
        boolean passed = canary != null && canary.isOver() && canary.getVerdict() == Verdict.Passed;
        boolean isoOff = canary != null && (canary.getIsoState() == null || canary.getIsoState() == IsoState.Detached);
        if (canary != null && !passed && isoOff) {
            status.setIsoCanary(null);
        }
    }
}
