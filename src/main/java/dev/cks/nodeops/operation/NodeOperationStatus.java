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
    /** Where spec.window stands; absent without a window. */
    private WindowStatus window;
    /**
     * Since when the operation has been held by spec.paused or its window with no node worked on: that time
     * does not count against the deadline, which moves on by it when work goes on.
     */
    private String heldSince;
    /** When the operation is estimated to be done (docs/eta.md), kept current as its nodes finish; absent when it is over or holds. */
    private String estimatedFinish;
    /** What estimatedFinish rests on: the work left, each kind's duration and whether it was measured here or a prior. */
    private String estimateBasis;

    public static class WindowStatus {
        public enum State { Open, Closed }

        private State state;
        /** The next opening (while open: the one after this). */
        private String opensAt;
        /** When the open window closes (while closed: when the next one closes). */
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
