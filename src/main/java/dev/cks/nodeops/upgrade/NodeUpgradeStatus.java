package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.operation.NodeOperationStatus;
import dev.cks.nodeops.operation.Stage;

public class NodeUpgradeStatus extends NodeOperationStatus {
    /** Holding: a Continuous NodeUpgrade whose nodes are all done watches for nodes below its target (docs/continuous.md). */
    public enum Phase { Pending, Running, Waiting, Holding, Succeeded, Failed }

    private Phase phase;
    private List<UpgradeNodeStatus> nodes = new ArrayList<>();
    /** The value of the retry annotation last acted on; a new value restarts a failed upgrade. */
    private String retryToken;
    /** The version the current rollout goes to: a Continuous NodeUpgrade whose spec.targetVersion changed starts a new one. */
    private String targetVersion;
    /** Continuous only, once its rollout is over. */
    private HoldStatus hold;

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
