package dev.cks.nodeops.operation;

import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.nodes.NodeRole;

/** Per-node status shared by NodeUpgrade and ScaleDown; each kind adds its own phase. */
public abstract class NodeProgress {
    private String name;
    private String vmId;
    private NodeRole role;
    /** False when the node was unschedulable before this operation: we never uncordon it then. */
    private Boolean cordonedByUs;
    private DrainState drain;
    private String startedAt;
    private String completedAt;
    /** The last error, at most 2000 characters (its tail). */
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
