package dev.cks.nodeops.audit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.OperationStatus;

public class VMMapAuditStatus extends OperationStatus {
    public enum Phase { Pending, InSync, DriftFound, Skipped, Suspended, Error }

    @JsonPropertyDescription("InSync, DriftFound, Skipped (the cluster is not Running or Alert, or is ExternalManaged), Suspended (spec.suspend, or auditing"
            + " turned off for the operator) or Error (CloudStack unreachable, or the cluster not found); empty before the first run.")
    private Phase phase;
    @JsonPropertyDescription("The id of the CloudStack Kubernetes cluster audited (spec.clusterId, the operator's, or the one found by its"
            + " Nodes); findings start afresh when it changes.")
    private String clusterId;
    @JsonPropertyDescription("What the last run did: when, how long, how many CloudStack calls, the cluster's state, and why it compared less, if it did.")
    private LastRun lastRun;
    @JsonPropertyDescription("How many findings the last comparison had, all of them (findings lists at most " + FindingDedupe.MAX_STORED_FINDINGS + ").")
    private Integer findingCount;
    @JsonPropertyDescription("The current findings' count by type, e.g. NodeWithoutVm: 1 (not bounded like findings), for metrics and alerts.")
    private Map<String, Integer> findingCounts = new TreeMap<>();
    @JsonPropertyDescription("When the last run that compared all three views (VM map, VMs, Nodes) started; an audit that stops completing is an alert.")
    private String lastCompleteRunAt;
    @JsonPropertyDescription("The current findings, the first " + FindingDedupe.MAX_STORED_FINDINGS + ", each with when it was first seen;"
            + " from the last comparison, kept while CloudStack cannot answer.")
    private List<VmMapFinding> findings = new ArrayList<>();
    @JsonPropertyDescription("Keys of the findings already reported by an event, so that each is reported once across restarts and replicas;"
            + " beyond " + ReportedKeys.PLAIN_LIMIT + " keys each is stored as its kind and a short hash.")
    private List<String> reportedKeys = new ArrayList<>();

    public static class LastRun {
        @JsonPropertyDescription("When the run started (RFC 3339, UTC).")
        private String startedAt;
        @JsonPropertyDescription("How long the run took, in milliseconds.")
        private Long durationMillis;
        @JsonPropertyDescription("How many CloudStack API calls the run made.")
        private Integer cloudStackCalls;
        @JsonPropertyDescription("The CKS cluster's state as CloudStack reported it, e.g. Running; empty when CloudStack did not answer or the cluster was not found.")
        private String clusterState;
        @JsonPropertyDescription("Why the run compared less than all three views, or was skipped; empty when it was complete.")
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
