package dev.cks.nodeops.scaledown;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.operation.NodeProgress;

/** One node of a ScaleDown; startedAt/completedAt of the base class bound its drain. */
public class ScaleDownNodeStatus extends NodeProgress {
    public enum Phase {
        Pending, Cordoned, Draining, Drained, Removed, Uncordoned, Failed,
        /** NotReady or its VM stopped: neither cordoned nor drained, still removed. */
        SkippedDown,
        /** Its drain was given up by the escalation ladder's SkipNode: given back and not removed (status.keptNodes). */
        Kept
    }

    @JsonPropertyDescription("Pending, Cordoned, Draining, Drained, Removed, Uncordoned (given back by a rollback), Failed, SkippedDown"
            + " (NotReady or its VM stopped: not drained, still removed) or Kept (given up by SkipNode: given back, not removed).")
    private Phase phase;
    @JsonPropertyDescription("When this operation made the node unschedulable (or found it so); every node is cordoned before any is drained.")
    private String cordonedAt;
    @JsonPropertyDescription("Why the node counts as down (NotReady, VM stopped); set only in phase SkippedDown.")
    private String downReason;
    @JsonPropertyDescription("DestroyVM: the CloudStack job destroying this node's VM, recorded as soon as CloudStack answers (or found after a lost answer).")
    private String removalJobId;
    @JsonPropertyDescription("DestroyVM: when destroyVirtualMachine was sent, written before it is sent; set without removalJobId, the outcome is"
            + " looked up, not sent again.")
    private String removalRequestedAt;

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public String getCordonedAt() { return cordonedAt; }
    public void setCordonedAt(String cordonedAt) { this.cordonedAt = cordonedAt; }
    public String getDownReason() { return downReason; }
    public void setDownReason(String downReason) { this.downReason = downReason; }
    public String getRemovalJobId() { return removalJobId; }
    public void setRemovalJobId(String removalJobId) { this.removalJobId = removalJobId; }
    public String getRemovalRequestedAt() { return removalRequestedAt; }
    public void setRemovalRequestedAt(String removalRequestedAt) { this.removalRequestedAt = removalRequestedAt; }

    /** Only the drain reads its state: once drained (or given up, removed, given back) the node reads none of it. */
    @Override
    protected DrainState.ReadBack drainReadBack() {
        return switch (phase == null ? Phase.Pending : phase) {
            case Pending, Cordoned, Draining -> DrainState.ReadBack.ALL;
            case Drained, Removed, Uncordoned, Failed, SkippedDown, Kept -> DrainState.ReadBack.NOTHING;
        };
    }
}
