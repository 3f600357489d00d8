package dev.cks.nodeops.audit;

/** One difference between CloudStack's view of the cluster and the cluster's own Nodes. */
public class VmMapFinding {
    public enum Type { MappedVmMissing, MappedVmDestroyed, MappedVmExpunged, MappedVmError, UnmappedVm, NodeWithoutVm, VmNotANode, VersionRecordStale }

    private Type type;
    /** Stable identity for dedupe: a mapped VM keeps `vm:<id>` from destroyed to expunged to gone. */
    private String key;
    private String vmId;
    private String vmName;
    private String node;
    private String firstSeen;
    private String message;

    public Type getType() { return type; }
    public void setType(Type type) { this.type = type; }
    public String getKey() { return key; }
    public void setKey(String key) { this.key = key; }
    public String getVmId() { return vmId; }
    public void setVmId(String vmId) { this.vmId = vmId; }
    public String getVmName() { return vmName; }
    public void setVmName(String vmName) { this.vmName = vmName; }
    public String getNode() { return node; }
    public void setNode(String node) { this.node = node; }
    public String getFirstSeen() { return firstSeen; }
    public void setFirstSeen(String firstSeen) { this.firstSeen = firstSeen; }
    public String getMessage() { return message; }
    public void setMessage(String message) { this.message = message; }
}
