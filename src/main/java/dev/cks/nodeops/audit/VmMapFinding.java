package dev.cks.nodeops.audit;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One difference between CloudStack's view of the cluster and the cluster's own Nodes. */
public class VmMapFinding {
    public enum Type { MappedVmMissing, MappedVmDestroyed, MappedVmExpunged, MappedVmError, UnmappedVm, NodeWithoutVm, VmNotANode, VersionRecordStale }

    @JsonPropertyDescription("What differs: a mapped VM missing, destroyed, expunged or in error; a VM named like the cluster's nodes but not"
            + " mapped; a Node without a VM; a mapped VM that is no Node; or CloudStack's recorded version of a node gone stale.")
    private Type type;
    @JsonPropertyDescription("The finding's identity across runs, e.g. vm:<id>, node:<name>, unmapped:<id>: a mapped VM keeps vm:<id> from"
            + " destroyed to expunged to gone, and is reported once.")
    private String key;
    @JsonPropertyDescription("The CloudStack VM id, when the finding is about a VM.")
    private String vmId;
    @JsonPropertyDescription("The CloudStack VM name, when known.")
    private String vmName;
    @JsonPropertyDescription("The Node's name, for NodeWithoutVm and VersionRecordStale.")
    private String node;
    @JsonPropertyDescription("When this finding was first seen (RFC 3339, UTC); kept across runs while it lasts.")
    private String firstSeen;
    @JsonPropertyDescription("What the finding means, as a sentence naming the VM or Node.")
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
