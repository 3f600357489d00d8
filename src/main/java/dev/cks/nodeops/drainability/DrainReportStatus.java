package dev.cks.nodeops.drainability;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.OperationStatus;

public class DrainReportStatus extends OperationStatus {
    public enum Phase { Pending, Drainable, Blocked, Suspended, Error }

    @JsonPropertyDescription("Drainable: every selected node could be drained now. Blocked: at least one could not (status.blockedNodes says"
            + " why). Suspended: spec.suspend is true. Error: the spec or the cluster could not be read (status.message says which).")
    private Phase phase;
    @JsonPropertyDescription("The last pass over the nodes: when it started, how long it took and what it read.")
    private LastRun lastRun;
    @JsonPropertyDescription("Nodes spec.nodeSelector selected in the last pass.")
    private Integer nodeCount;
    @JsonPropertyDescription("Selected nodes the last pass found drainable now.")
    private Integer drainableCount;
    @JsonPropertyDescription("Selected nodes the last pass found blocked, all of them (status.blockedNodes lists at most 100).")
    private Integer blockedCount;
    /** The blocked nodes with their reasons, longest blocked first, at most {@link BlockedNodes#MAX_LISTED}; blockedCount counts them all. */
    @JsonPropertyDescription("The blocked nodes with their causes and reasons, longest blocked first, at most 100; blockedCount counts them all.")
    private List<BlockedNode> blockedNodes = new ArrayList<>();
    /** Every node announced blocked and not yet drainable again, so each change is announced once across passes and restarts. */
    @JsonPropertyDescription("Every node a NodeUndrainable event announced and that is not drainable again yet: the operator's memory, so that"
            + " each change is announced once across passes and restarts.")
    private List<String> reportedBlocked = new ArrayList<>();

    public static class LastRun {
        @JsonPropertyDescription("When the pass started (RFC 3339, UTC).")
        private String startedAt;
        @JsonPropertyDescription("How long the pass took, in milliseconds.")
        private Long durationMillis;
        /** Requests to the API server the pass made: one paged list each of Nodes, pods and PodDisruptionBudgets. */
        @JsonPropertyDescription("Requests the pass made to the API server: one paged list each of Nodes, pods and PodDisruptionBudgets.")
        private Integer apiRequests;
        @JsonPropertyDescription("Pods the pass read.")
        private Integer pods;

        public String getStartedAt() { return startedAt; }
        public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
        public Long getDurationMillis() { return durationMillis; }
        public void setDurationMillis(Long durationMillis) { this.durationMillis = durationMillis; }
        public Integer getApiRequests() { return apiRequests; }
        public void setApiRequests(Integer apiRequests) { this.apiRequests = apiRequests; }
        public Integer getPods() { return pods; }
        public void setPods(Integer pods) { this.pods = pods; }
    }

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public LastRun getLastRun() { return lastRun; }
    public void setLastRun(LastRun lastRun) { this.lastRun = lastRun; }
    public Integer getNodeCount() { return nodeCount; }
    public void setNodeCount(Integer nodeCount) { this.nodeCount = nodeCount; }
    public Integer getDrainableCount() { return drainableCount; }
    public void setDrainableCount(Integer drainableCount) { this.drainableCount = drainableCount; }
    public Integer getBlockedCount() { return blockedCount; }
    public void setBlockedCount(Integer blockedCount) { this.blockedCount = blockedCount; }
    public List<BlockedNode> getBlockedNodes() { return blockedNodes; }
    public void setBlockedNodes(List<BlockedNode> blockedNodes) { this.blockedNodes = blockedNodes == null ? new ArrayList<>() : blockedNodes; }
    public List<String> getReportedBlocked() { return reportedBlocked; }
    public void setReportedBlocked(List<String> reportedBlocked) { this.reportedBlocked = reportedBlocked == null ? new ArrayList<>() : reportedBlocked; }
}
