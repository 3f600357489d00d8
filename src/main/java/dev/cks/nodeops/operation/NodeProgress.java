package dev.cks.nodeops.operation;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.nodes.NodeRole;

/** Per-node status shared by NodeUpgrade and ScaleDown; each kind adds its own phase. */
public abstract class NodeProgress {
    @JsonPropertyDescription("The Node's name.")
    private String name;
    @JsonPropertyDescription("The node's CloudStack VM id, once the operation looked it up (a ScaleDown from the cluster's VM map, a NodeUpgrade's"
            + " CloudStackIso executor when it attaches the ISO); empty otherwise.")
    private String vmId;
    @JsonPropertyDescription("ControlPlane or Worker.")
    private NodeRole role;
    @JsonPropertyDescription("Whether this operation cordoned the node: false when it was unschedulable before, and then the operation never uncordons it."
            + " Empty until it is cordoned.")
    private Boolean cordonedByUs;
    @JsonPropertyDescription("The node's drain: its attempt, what blocks it, what it evicted. Once the node is done only the count of evicted pods"
            + " and the escalation steps taken stay.")
    private DrainState drain;
    @JsonPropertyDescription("When work on the node began: a NodeUpgrade's when it cordoned it, a ScaleDown's when its drain began (RFC 3339, UTC).")
    private String startedAt;
    @JsonPropertyDescription("When work on the node ended: a NodeUpgrade's when the node was done, skipped or failed and given back; a ScaleDown's"
            + " when its drain finished or SkipNode gave it up. Empty until then.")
    private String completedAt;
    @JsonPropertyDescription("The node's last error, its last 2000 characters at most; empty when none.")
    private String error;

    public String getName() { return name; }
    public void setName(String name) { this.name = name; }
    public String getVmId() { return vmId; }
    public void setVmId(String vmId) { this.vmId = vmId; }
    public NodeRole getRole() { return role; }
    public void setRole(NodeRole role) { this.role = role; }
    public Boolean getCordonedByUs() { return cordonedByUs; }
    public void setCordonedByUs(Boolean cordonedByUs) { this.cordonedByUs = cordonedByUs; }
    public DrainState getDrain() { return drain; }
    public void setDrain(DrainState drain) { this.drain = drain; }
    public String getStartedAt() { return startedAt; }
    public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
    public String getCompletedAt() { return completedAt; }
    public void setCompletedAt(String completedAt) { this.completedAt = completedAt; }
    public String getError() { return error; }
    public void setError(String error) { this.error = error; }

    /** What of its drain this node's next steps still read back, by its phase; not a bean property, so it stays out of the CRD. */
    protected abstract DrainState.ReadBack drainReadBack();

    /**
     * Drops what this node's next steps no longer read back: of its drain by the one rule both kinds share
     * ({@link DrainState#keepFor}); a kind adds its own working fields of a node it is done with.
     */
    public void keepWhatIsReadBack() {
        if (drain != null) {
            drain.keepFor(drainReadBack());
        }
    }
}
