package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** What a Continuous NodeUpgrade reports while it holds its version (status.hold). */
public class HoldStatus {
    /** At most this many nodes newer than the target are named; the count says how many there are. */
    static final int NAMED_NEWER = 20;

    @JsonPropertyDescription("Since when it holds: when its rollout, or its last correction, was over (RFC 3339, UTC).")
    private String since;
    @JsonPropertyDescription("When it last looked at the nodes its selector matches (every spec.holdIntervalSeconds, and on Node changes).")
    private String lastScanAt;
    @JsonPropertyDescription("How many selected nodes run a kubelet older than the target now (being corrected, waiting, NotReady or opted out).")
    private Integer belowTarget = 0;
    @JsonPropertyDescription("How many selected nodes run a kubelet newer than the target: reported, never taken down.")
    private Integer aboveTarget = 0;
    @JsonPropertyDescription("The nodes newer than the target as \"name (version)\", the first " + NAMED_NEWER + "; aboveTarget counts them all.")
    private List<String> newer = new ArrayList<>();
    @JsonPropertyDescription("The last node it upgraded after its rollout was over; empty when none was.")
    private String lastCorrectedNode;
    @JsonPropertyDescription("When lastCorrectedNode was done (RFC 3339, UTC).")
    private String lastCorrectedAt;
    @JsonPropertyDescription("Continuous NodeUpgrades created after this one that select a node it selects: they are refused, and named here.")
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
