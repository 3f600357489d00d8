package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

/** What a Continuous NodeUpgrade reports while it holds its version (status.hold). */
public class HoldStatus {
    /** At most this many nodes newer than the target are named; the count says how many there are. */
    static final int NAMED_NEWER = 20;

    /** Since when it holds (its rollout, or its last correction, was over). */
    private String since;
    /** When it last looked at the nodes its selector matches. */
    private String lastScanAt;
    /** Selected nodes whose kubelet is older than the target now (being corrected, waiting, NotReady or opted out). */
    private Integer belowTarget = 0;
    /** Selected nodes whose kubelet is newer than the target: reported, never taken down. */
    private Integer aboveTarget = 0;
    /** Those nodes as "name (version)", the first {@value #NAMED_NEWER}. */
    private List<String> newer = new ArrayList<>();
    /** The last node it upgraded after its rollout was over, and when that node was done. */
    private String lastCorrectedNode;
    private String lastCorrectedAt;
    /** Continuous NodeUpgrades created after this one that select a node it selects: refused, named here. */
    private List<String> overlappedBy = new ArrayList<>();

    public String getSince() { return since; }
    public void setSince(String since) { this.since = since; }
    public String getLastScanAt() { return lastScanAt; }
    public void setLastScanAt(String lastScanAt) { this.lastScanAt = lastScanAt; }
    public Integer getBelowTarget() { return belowTarget; }
    public void setBelowTarget(Integer belowTarget) { this.belowTarget = belowTarget; }
    public Integer getAboveTarget() { return aboveTarget; }
    public void setAboveTarget(Integer aboveTarget) { this.aboveTarget = aboveTarget; }
    public List<String> getNewer() { return newer; }
    public void setNewer(List<String> newer) { this.newer = newer == null ? new ArrayList<>() : newer; }
    public String getLastCorrectedNode() { return lastCorrectedNode; }
    public void setLastCorrectedNode(String lastCorrectedNode) { this.lastCorrectedNode = lastCorrectedNode; }
    public String getLastCorrectedAt() { return lastCorrectedAt; }
    public void setLastCorrectedAt(String lastCorrectedAt) { this.lastCorrectedAt = lastCorrectedAt; }
    public List<String> getOverlappedBy() { return overlappedBy; }
    public void setOverlappedBy(List<String> overlappedBy) { this.overlappedBy = overlappedBy == null ? new ArrayList<>() : overlappedBy; }
}
