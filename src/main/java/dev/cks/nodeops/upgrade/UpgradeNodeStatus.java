package dev.cks.nodeops.upgrade;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.operation.NodeProgress;

public class UpgradeNodeStatus extends NodeProgress implements IsoRecord {
    public enum Action {
        /** The first control-plane node: `kubeadm upgrade apply`. */
        Apply,
        /** Every other node: `kubeadm upgrade node`. */
        Node,
        /** Not upgraded: already Ready at the target version, or left out (skipReason says why). */
        Skip
    }

    public enum Phase {
        Pending, Skipped, Cordoned, Draining, Upgrading, WaitingReady,
        /** Upgraded, Ready and uncordoned; the node it makes room for waits for soakSeconds (and its drained workloads). */
        Soaking,
        Succeeded, Failed
    }

    /** Where the binaries ISO of the CloudStackIso executor is; each change is a CloudStack job the operator polls. */
    public enum IsoState {
        /** attachIso asked for (its job in isoJobId once CloudStack answered). */
        Attaching,
        Attached,
        /** detachIso asked for (its job in isoJobId once CloudStack answered). */
        Detaching,
        Detached
    }

    @JsonPropertyDescription("Apply (the first control-plane node: kubeadm upgrade apply), Node (every other node: kubeadm upgrade node)"
            + " or Skip (not upgraded; skipReason says why).")
    private Action action;
    @JsonPropertyDescription("Pending, Cordoned, Draining, Upgrading (the executor runs), WaitingReady (until Ready at the target),"
            + " Soaking (upgraded and uncordoned; the next node waits spec.soakSeconds), Succeeded, Skipped or Failed.")
    private Phase phase;
    @JsonPropertyDescription("The node's kubelet version when the upgrade planned it.")
    private String fromVersion;
    @JsonPropertyDescription("The kubelet version the node reported once Ready at the target (or when planned, if it was at the target already); empty until then.")
    private String version;
    @JsonPropertyDescription("The name of the node's upgrade Job in the operator's namespace, so that a restarted operator finds it instead of creating another.")
    private String jobName;
    @JsonPropertyDescription("When a pod of the upgrade Job was first seen started: kubeadm may have run since, so the Job is never created again."
            + " Cleared once the node is done.")
    private String jobPodStartedAt;
    @JsonPropertyDescription("When the operator last saw no pod of the upgrade Job started: a Job deleted soon after may be created again."
            + " Cleared once the node is done.")
    private String jobPodNotStartedAt;
    @JsonPropertyDescription("CloudStackIso: the id of the ISO attached to the node's VM for the upgrade.")
    private String isoId;
    @JsonPropertyDescription("CloudStackIso: Attaching, Attached, Detaching or Detached; each change is a CloudStack job the operator polls.")
    private IsoState isoState;
    @JsonPropertyDescription("CloudStackIso: the CloudStack job attaching or detaching the ISO, polled until it ends.")
    private String isoJobId;
    @JsonPropertyDescription("CloudStackIso: when attachIso or detachIso was sent, written before it is sent; set without isoJobId, the"
            + " request's outcome is looked up, not sent again.")
    private String isoRequestedAt;
    @JsonPropertyDescription("CloudStackIso, the first control-plane node only: what its script did with the ISO's addon manifests after"
            + " kubeadm upgrade apply, e.g. \"network.yaml applied; headlamp.yaml applied\", a failed one with its reason, or unknown when the"
            + " Job's log held no outcome. A failed apply leaves the node upgraded (condition AddonsApplied False).")
    private String addons;
    @JsonPropertyDescription("When the node's current step began (the executor's start, and step durations for metrics); cleared once the node is done.")
    private String stepStartedAt;
    @JsonPropertyDescription("Until when the node may take, after the executor finished, to be Ready at the target (spec.readyTimeoutSeconds);"
            + " cleared once the node is done.")
    private String readyBy;
    @JsonPropertyDescription("Until when the node soaks (spec.soakSeconds) before the node it makes room for may start.")
    private String soakUntil;
    @JsonPropertyDescription("Why the node is not upgraded (phase Skipped): at the target already, opted out, or given up by the drain's escalation.")
    private String skipReason;
    @JsonPropertyDescription("Continuous only: when the node was planned (its rollout, a rollout to a new target, or a correction); part of the"
            + " name of its Job, so that each gets a Job of its own.")
    private String attempt;

    public Action getAction() { return action; }
    public void setAction(Action action) { this.action = action; }
    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public String getFromVersion() { return fromVersion; }
    public void setFromVersion(String fromVersion) { this.fromVersion = fromVersion; }
    public String getVersion() { return version; }
    public void setVersion(String version) { this.version = version; }
    public String getJobName() { return jobName; }
    public void setJobName(String jobName) { this.jobName = jobName; }
    public String getJobPodStartedAt() { return jobPodStartedAt; }
    public void setJobPodStartedAt(String jobPodStartedAt) { this.jobPodStartedAt = jobPodStartedAt; }
    public String getJobPodNotStartedAt() { return jobPodNotStartedAt; }
    public void setJobPodNotStartedAt(String jobPodNotStartedAt) { this.jobPodNotStartedAt = jobPodNotStartedAt; }
    public String getIsoId() { return isoId; }
    public void setIsoId(String isoId) { this.isoId = isoId; }
    public IsoState getIsoState() { return isoState; }
    public void setIsoState(IsoState isoState) { this.isoState = isoState; }
    public String getIsoJobId() { return isoJobId; }
    public void setIsoJobId(String isoJobId) { this.isoJobId = isoJobId; }
    public String getIsoRequestedAt() { return isoRequestedAt; }
    public void setIsoRequestedAt(String isoRequestedAt) { this.isoRequestedAt = isoRequestedAt; }
    public String getAddons() { return addons; }
    public void setAddons(String addons) { this.addons = addons; }
    public String getStepStartedAt() { return stepStartedAt; }
    public void setStepStartedAt(String stepStartedAt) { this.stepStartedAt = stepStartedAt; }
    public String getReadyBy() { return readyBy; }
    public void setReadyBy(String readyBy) { this.readyBy = readyBy; }
    public String getSoakUntil() { return soakUntil; }
    public void setSoakUntil(String soakUntil) { this.soakUntil = soakUntil; }
    public String getSkipReason() { return skipReason; }
    public void setSkipReason(String skipReason) { this.skipReason = skipReason; }
    public String getAttempt() { return attempt; }
    public void setAttempt(String attempt) { this.attempt = attempt; }

    /** The drain reads its state while it runs; the soak reads the workloads it evicted; after that, nothing does. */
    @Override
    protected DrainState.ReadBack drainReadBack() {
        return switch (phase == null ? Phase.Pending : phase) {
            case Pending, Cordoned, Draining -> DrainState.ReadBack.ALL;
            case Upgrading, WaitingReady, Soaking -> DrainState.ReadBack.WORKLOADS;
            case Skipped, Succeeded, Failed -> DrainState.ReadBack.NOTHING;
        };
    }

    /**
     * A node done with (upgraded, skipped, or failed and given back) has no step to time, no Ready deadline and no
     * Job to make again: stepStartedAt, readyBy and the sightings of the Job's pod go (its WaitingReady and
     * NodeUpgraded events keep the times; a node failed for a deleted Job says in its error when a pod of it was
     * seen). What users read of it stays: its Job, versions, soakUntil, the ISO's last state, cordonedByUs,
     * startedAt and completedAt.
     */
    @Override
    public void keepWhatIsReadBack() {
        super.keepWhatIsReadBack();
        if (phase == Phase.Succeeded || phase == Phase.Skipped || phase == Phase.Failed && getCompletedAt() != null) {
            stepStartedAt = null;
            readyBy = null;
            jobPodStartedAt = null;
            jobPodNotStartedAt = null;
        }
    }
}
