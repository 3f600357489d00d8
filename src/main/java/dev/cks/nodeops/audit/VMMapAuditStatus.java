package dev.cks.nodeops.audit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.cks.nodeops.common.OperationStatus;

public class VMMapAuditStatus extends OperationStatus {
    public enum Phase { Pending, InSync, DriftFound, Skipped, Suspended, Error }

    private Phase phase;
    private String clusterId;
    private LastRun lastRun;
    private Integer findingCount;
    /** Current findings by type (the findings list is bounded; these counts are not), for metrics and alerts. */
    private Map<String, Integer> findingCounts = new TreeMap<>();
    /** When the last run that compared all three views started; an audit that stops completing is an alert. */
    private String lastCompleteRunAt;
    private List<VmMapFinding> findings = new ArrayList<>();
    /** Keys of the findings already reported, so each is reported once across restarts and replicas. */
    private List<String> reportedKeys = new ArrayList<>();

    public static class LastRun {
        private String startedAt;
        private Long durationMillis;
        private Integer cloudStackCalls;
        private String clusterState;
        /** Why the last run compared less than all three views, or was skipped; empty when it was complete. */
        private String note;

        public String getStartedAt() { return startedAt; }
        public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
        public Long getDurationMillis() { return durationMillis; }
        public void setDurationMillis(Long durationMillis) { this.durationMillis = durationMillis; }
        public Integer getCloudStackCalls() { return cloudStackCalls; }
        public void setCloudStackCalls(Integer cloudStackCalls) { this.cloudStackCalls = cloudStackCalls; }
        public String getClusterState() { return clusterState; }
        public void setClusterState(String clusterState) { this.clusterState = clusterState; }
        public String getNote() { return note; }
        public void setNote(String note) { this.note = note; }
    }

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public String getClusterId() { return clusterId; }
    public void setClusterId(String clusterId) { this.clusterId = clusterId; }
    public LastRun getLastRun() { return lastRun; }
    public void setLastRun(LastRun lastRun) { this.lastRun = lastRun; }
    public Integer getFindingCount() { return findingCount; }
    public void setFindingCount(Integer findingCount) { this.findingCount = findingCount; }
    public Map<String, Integer> getFindingCounts() { return findingCounts; }
    public void setFindingCounts(Map<String, Integer> findingCounts) { this.findingCounts = findingCounts == null ? new TreeMap<>() : findingCounts; }
    public String getLastCompleteRunAt() { return lastCompleteRunAt; }
    public void setLastCompleteRunAt(String lastCompleteRunAt) { this.lastCompleteRunAt = lastCompleteRunAt; }
    public List<VmMapFinding> getFindings() { return findings; }
    public void setFindings(List<VmMapFinding> findings) { this.findings = findings == null ? new ArrayList<>() : findings; }
    public List<String> getReportedKeys() { return reportedKeys; }
    public void setReportedKeys(List<String> reportedKeys) { this.reportedKeys = reportedKeys == null ? new ArrayList<>() : reportedKeys; }
}
