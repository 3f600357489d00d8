package dev.cks.nodeops.scaledown;

import dev.cks.nodeops.nodes.NodeProgress;

public class ScaleDownNodeStatus extends NodeProgress {
    public enum Phase {
        Pending, Cordoned, Draining, Drained, Removed, Uncordoned, Failed,
        /** NotReady or its VM stopped: neither cordoned nor drained, still removed. */
        SkippedDown
    }

    private Phase phase;

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
}
