package dev.cks.nodeops.operation;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.OperationStatus;

/** The status fields ScaleDown and NodeUpgrade share, and how each maps the kit's stages onto its phases. */
public abstract class NodeOperationStatus extends OperationStatus {
    @JsonPropertyDescription("Nodes done out of the nodes to do, e.g. 2/5: for a NodeUpgrade the selected nodes upgraded or skipped, for a"
            + " ScaleDown the nodes drained or removed (nodes found down do not count).")
    private String progress;
    @JsonPropertyDescription("The node worked on now (a NodeUpgrade upgrading several workers at once names them, comma-separated); empty when none is.")
    private String currentNode;
    @JsonPropertyDescription("The id of the CKS cluster in CloudStack this operation works with (the operator's configured one, or the one whose"
            + " VM map names its nodes), kept so that a restarted operator asks about the same one; empty until the operation first needs CloudStack.")
    private String clusterId;
    @JsonPropertyDescription("Where spec.window stands: open or closed, and when it opens and closes next; absent without spec.window.")
    private WindowStatus window;
    @JsonPropertyDescription("Since when the operation has been held by spec.paused or its window with no node worked on; that time does not count"
            + " against the deadline, which moves on by it when work goes on. Empty when not held.")
    private String heldSince;
    @JsonPropertyDescription("When the operation is estimated to be done (RFC 3339, UTC; docs/eta.md), kept current as its nodes finish and"
            + " moved past a closed window to its next opening; absent when it is over or a Continuous NodeUpgrade holds.")
    private String estimatedFinish;
    @JsonPropertyDescription("What estimatedFinish rests on: the work left and each kind of step's duration, measured on this operation's"
            + " finished nodes or, until one finished, the operator's default (cks.estimate.*).")
    private String estimateBasis;

    public static class WindowStatus {
        public enum State { Open, Closed }

        @JsonPropertyDescription("Open: work may start. Closed: nothing new starts until opensAt (work in progress follows spec.window.onClose).")
        private State state;
        @JsonPropertyDescription("When the window opens next (RFC 3339, UTC); while it is open, the opening after this one.")
        private String opensAt;
        @JsonPropertyDescription("When the open window closes; while it is closed, when the next one closes (RFC 3339, UTC).")
        private String closesAt;

        public State getState() { return state; }
        public void setState(State state) { this.state = state; }
        public String getOpensAt() { return opensAt; }
        public void setOpensAt(String opensAt) { this.opensAt = opensAt; }
        public String getClosesAt() { return closesAt; }
        public void setClosesAt(String closesAt) { this.closesAt = closesAt; }
    }

    public String getProgress() { return progress; }
    public void setProgress(String progress) { this.progress = progress; }
    public String getCurrentNode() { return currentNode; }
    public void setCurrentNode(String currentNode) { this.currentNode = currentNode; }
    public String getClusterId() { return clusterId; }
    public void setClusterId(String clusterId) { this.clusterId = clusterId; }
    public WindowStatus getWindow() { return window; }
    public void setWindow(WindowStatus window) { this.window = window; }
    public String getHeldSince() { return heldSince; }
    public void setHeldSince(String heldSince) { this.heldSince = heldSince; }
    public String getEstimatedFinish() { return estimatedFinish; }
    public void setEstimatedFinish(String estimatedFinish) { this.estimatedFinish = estimatedFinish; }
    public String getEstimateBasis() { return estimateBasis; }
    public void setEstimateBasis(String estimateBasis) { this.estimateBasis = estimateBasis; }

    /**
     * The deadline as it stands now: while the operation is held (paused, outside its window) the time held
     * so far is added, as it will be when work goes on. Null without a deadline.
     */
    public java.time.Instant deadlineAt(java.time.Instant now) {
        java.time.Instant deadline = dev.cks.nodeops.common.Timestamps.parse(getDeadline());
        java.time.Instant heldFrom = dev.cks.nodeops.common.Timestamps.parse(heldSince);
        return deadline == null || heldFrom == null || heldFrom.isAfter(now) ? deadline : deadline.plus(java.time.Duration.between(heldFrom, now));
    }

    /** Every node of the operation, wherever the kind lists it; not a bean property. */
    protected abstract java.util.List<? extends NodeProgress> nodeProgress();

    /**
     * The one bound on the drain history a status carries: each node keeps of its drain only what its next steps
     * read back ({@link dev.cks.nodeops.drain.DrainState#keepFor}), so the status of an operation over a thousand
     * dense nodes stays a few hundred bytes a node; the NodeDrained event tells what each drain evicted.
     */
    public void trimDrainHistory() {
        nodeProgress().forEach(NodeProgress::keepWhatIsReadBack);
    }

    /** Moves the kind's phase to the one for this stage. */
    public abstract void enter(Stage stage);

    /** The kind's phase as its name; null before the first reconcile. */
    public abstract String phaseName();

    /** Not a bean property (no "is"/"get"), so it stays out of the CRD and the stored status. */
    public abstract boolean finished();
}
