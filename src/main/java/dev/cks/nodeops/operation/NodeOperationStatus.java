package dev.cks.nodeops.operation;

import dev.cks.nodeops.common.OperationStatus;

/** The status fields ScaleDown and NodeUpgrade share, and how each maps the kit's stages onto its phases. */
public abstract class NodeOperationStatus extends OperationStatus {
    /** Done out of selected, e.g. "2/5", for `kubectl get`. */
    private String progress;
    /** The node being worked on, for `kubectl get`. */
    private String currentNode;
    /** The CloudStack Kubernetes cluster this operation found (or was told), recorded so a restart asks for the same one. */
    private String clusterId;

    public String getProgress() { return progress; }
    public void setProgress(String progress) { this.progress = progress; }
    public String getCurrentNode() { return currentNode; }
    public void setCurrentNode(String currentNode) { this.currentNode = currentNode; }
    public String getClusterId() { return clusterId; }
    public void setClusterId(String clusterId) { this.clusterId = clusterId; }

    /** Moves the kind's phase to the one for this stage. */
    public abstract void enter(Stage stage);

    /** The kind's phase as its name; null before the first reconcile. */
    public abstract String phaseName();

    /** Not a bean property (no "is"/"get"), so it stays out of the CRD and the stored status. */
    public abstract boolean finished();
}
