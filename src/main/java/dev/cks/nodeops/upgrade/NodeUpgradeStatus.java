package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.operation.NodeOperationStatus;
import dev.cks.nodeops.operation.Stage;

public class NodeUpgradeStatus extends NodeOperationStatus {
    /** Holding: a Continuous NodeUpgrade whose nodes are all done watches for nodes below its target (docs/continuous.md). */
    public enum Phase { Pending, Running, Waiting, Holding, Succeeded, Failed }

    @JsonPropertyDescription("Pending (not planned yet), Running, Waiting (held by spec.paused, the window or another wait while no node is"
            + " cordoned; the Waiting condition says why), Holding (Continuous: every node done, it watches for nodes below the target),"
            + " Succeeded or Failed.")
    private Phase phase;
    @JsonPropertyDescription("Every node the upgrade selected, in the order they are upgraded (the first control-plane node, the other"
            + " control-plane nodes, then the workers), each with its phase, versions and drain.")
    private List<UpgradeNodeStatus> nodes = new ArrayList<>();
    @JsonPropertyDescription("The value of the annotation nodeops.cks.dev/retry last acted on; another value restarts a finished upgrade.")
    private String retryToken;
    @JsonPropertyDescription("The version the current rollout goes to; a Continuous NodeUpgrade whose spec.targetVersion changed starts a new"
            + " rollout to the new one. Empty until planned.")
    private String targetVersion;
    @JsonPropertyDescription("Continuous only, once its rollout is over: what it sees of the selected nodes while it holds the version.")
    private HoldStatus hold;
    @JsonPropertyDescription("CloudStackIso only: the ISO canary, the target's binaries ISO checked read-only on the first node before any node"
            + " is cordoned (docs/upgrade.md, \"ISO canary\"); condition IsoVerified says its verdict.")
    private IsoCanaryStatus isoCanary;

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public List<UpgradeNodeStatus> getNodes() { return nodes; }
    public void setNodes(List<UpgradeNodeStatus> nodes) { this.nodes = nodes == null ? new ArrayList<>() : nodes; }
    public String getRetryToken() { return retryToken; }
    public void setRetryToken(String retryToken) { this.retryToken = retryToken; }
    public String getTargetVersion() { return targetVersion; }
    public void setTargetVersion(String targetVersion) { this.targetVersion = targetVersion; }
    public HoldStatus getHold() { return hold; }
    public void setHold(HoldStatus hold) { this.hold = hold; }
    public IsoCanaryStatus getIsoCanary() { return isoCanary; }
    public void setIsoCanary(IsoCanaryStatus isoCanary) { this.isoCanary = isoCanary; }

    /** Waiting only while no node is held; a wait with a node cordoned keeps Running and the Waiting condition says why. */
    @Override
    public void enter(Stage stage) {
        phase = switch (stage) {
            case WAITING -> holdsANode() ? phase : Phase.Waiting;
            case RUNNING -> Phase.Running;
            case HOLDING -> Phase.Holding;
            case SUCCEEDED -> Phase.Succeeded;
            case ROLLED_BACK, FAILED -> Phase.Failed;
        };
    }

    private boolean holdsANode() {
        return nodes.stream().map(UpgradeNodeStatus::getPhase).anyMatch(p -> p == UpgradeNodeStatus.Phase.Cordoned
                || p == UpgradeNodeStatus.Phase.Draining || p == UpgradeNodeStatus.Phase.Upgrading || p == UpgradeNodeStatus.Phase.WaitingReady);
    }

    @Override
    protected List<UpgradeNodeStatus> nodeProgress() {
        return nodes;
    }

    @Override
    public String phaseName() {
        return phase == null ? null : phase.name();
    }

    @Override
    public boolean finished() {
        return phase == Phase.Succeeded || phase == Phase.Failed;
    }
}
