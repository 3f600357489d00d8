package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.common.OperationStatus;

public class NodeUpgradeStatus extends OperationStatus {
    public enum Phase { Pending, Running, Waiting, Succeeded, Failed }

    private Phase phase;
    /** Nodes done out of nodes selected, e.g. "2/5". */
    private String progress;
    private String currentNode;
    private List<UpgradeNodeStatus> nodes = new ArrayList<>();
    /** The value of the retry annotation last acted on; a new value restarts a failed upgrade. */
    private String retryToken;
    private String clusterId;

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public String getProgress() { return progress; }
    public void setProgress(String progress) { this.progress = progress; }
    public String getCurrentNode() { return currentNode; }
    public void setCurrentNode(String currentNode) { this.currentNode = currentNode; }
    public List<UpgradeNodeStatus> getNodes() { return nodes; }
    public void setNodes(List<UpgradeNodeStatus> nodes) { this.nodes = nodes == null ? new ArrayList<>() : nodes; }
    public String getRetryToken() { return retryToken; }
    public void setRetryToken(String retryToken) { this.retryToken = retryToken; }
    public String getClusterId() { return clusterId; }
    public void setClusterId(String clusterId) { this.clusterId = clusterId; }
}
