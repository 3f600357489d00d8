package dev.cks.nodeops.upgrade;

import dev.cks.nodeops.nodes.NodeProgress;

public class UpgradeNodeStatus extends NodeProgress {
    public enum Action {
        /** The first control-plane node: `kubeadm upgrade apply`. */
        Apply,
        /** Every other node: `kubeadm upgrade node`. */
        Node,
        /** Already Ready at the target version. */
        Skip
    }

    public enum Phase { Pending, Skipped, Cordoned, Draining, Upgrading, WaitingReady, Succeeded, Failed }

    private Action action;
    private Phase phase;
    private String fromVersion;
    private String version;
    /** Name of the upgrade Job, so a restarted operator finds it instead of creating another. */
    private String jobName;

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
}
