package dev.cks.nodeops.audit;

import dev.cks.nodeops.audit.VmMapFinding.Type;

/**
 * One difference found in a snapshot, before dedupe gives it a first-seen time.
 *
 * @param key identity across runs: {@code vm:<id>} for every finding about a mapped VM's state (so
 *        destroyed, expunged and gone are one finding), {@code unmapped:<id>}, {@code node:<name>},
 *        {@code notanode:<id>}, {@code version:<id>}, {@code map:uncounted}
 */
public record Drift(Type type, String key, String vmId, String vmName, String node, String message) {
    /** The one finding about VMs CloudStack counts for the cluster but cannot name. */
    static final String MAP_COUNT_KEY = "map:uncounted";

    static Drift of(VmMapFinding finding) {
        return new Drift(finding.getType(), finding.getKey(), finding.getVmId(), finding.getVmName(), finding.getNode(),
                finding.getMessage());
    }

    VmMapFinding toFinding(String firstSeen) {
        VmMapFinding finding = new VmMapFinding();
        finding.setType(type);
        finding.setKey(key);
        finding.setVmId(vmId);
        finding.setVmName(vmName);
        finding.setNode(node);
        finding.setFirstSeen(firstSeen);
        finding.setMessage(message);
        return finding;
    }

    /** Findings that need the Node list; kept as they were when it cannot be read. */
    public boolean needsNodes() {
        return isAboutNodes(type);
    }

    static boolean isAboutNodes(Type type) {
        return type == Type.NodeWithoutVm || type == Type.VmNotANode || type == Type.VersionRecordStale;
    }

    static String mappedVmKey(String vmId) {
        return "vm:" + vmId;
    }

    static String unmappedVmKey(String vmId) {
        return "unmapped:" + vmId;
    }

    static String nodeKey(String nodeName) {
        return "node:" + nodeName;
    }

    static String notANodeKey(String vmId) {
        return "notanode:" + vmId;
    }

    static String versionKey(String vmId) {
        return "version:" + vmId;
    }
}
