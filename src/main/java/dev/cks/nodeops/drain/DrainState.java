package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.List;

/**
 * The drain engine's resumable state for one node, stored by the caller in CR status so that a
 * restarted operator carries on with the same attempt and deadlines.
 */
public class DrainState {
    /** Older entries of {@link #podsSeen} are dropped beyond this, so a huge node can't bloat the status. */
    static final int MAX_PODS_SEEN = 500;
    static final int MAX_WORKLOADS = 100;

    private Integer attempt;
    private String attemptStartedAt;
    private String nextAttemptAt;
    /** What keeps the node from being drained, as users read it; empty when nothing does. */
    private String blockedBy;
    /** Pods (namespace/name/uid) evicted in this drain, so a UID change can be told from the same pod. */
    private List<String> podsSeen = new ArrayList<>();
    /** The tail (at most 2000 characters) of the last error the API server answered during this drain. */
    private String lastApiError;
    /** The budgets (namespace/name, sorted) holding pods on the node while no pod leaves it; null when none do. */
    private String blockCause;
    /** Since when {@link #blockCause} has held the drain without a pod leaving the node. */
    private String blockSince;
    /** The steps of the escalation ladder this drain took, each once per cause, with when and what came of it. */
    private List<EscalationRecord> escalation = new ArrayList<>();
    /** The controllers of the pods this drain evicted ({@code Kind namespace/name}), for the soak's health gate. */
    private List<String> workloads = new ArrayList<>();

    public static DrainState copyOf(DrainState state) {
        DrainState copy = new DrainState();
        if (state != null) {
            copy.attempt = state.attempt;
            copy.attemptStartedAt = state.attemptStartedAt;
            copy.nextAttemptAt = state.nextAttemptAt;
            copy.blockedBy = state.blockedBy;
            copy.podsSeen = new ArrayList<>(state.podsSeen);
            copy.lastApiError = state.lastApiError;
            copy.blockCause = state.blockCause;
            copy.blockSince = state.blockSince;
            copy.escalation = new ArrayList<>(state.escalation);
            copy.workloads = new ArrayList<>(state.workloads);
        }
        return copy;
    }

    /**
     * The drain was held (paused, or its window closed) for this long: its attempt and block clocks move on
     * by as much, so the time held uses up neither an attempt nor counts as blocked.
     */
    public void resumeAfter(java.time.Duration held) {
        attemptStartedAt = shifted(attemptStartedAt, held);
        nextAttemptAt = shifted(nextAttemptAt, held);
        blockSince = shifted(blockSince, held);
    }

    private static String shifted(String timestamp, java.time.Duration by) {
        java.time.Instant at = dev.cks.nodeops.common.Timestamps.parse(timestamp);
        return at == null ? null : dev.cks.nodeops.common.Timestamps.format(at.plus(by));
    }

    void recordWorkload(String workload) {
        if (workload != null && !workloads.contains(workload) && workloads.size() < MAX_WORKLOADS) {
            workloads.add(workload);
        }
    }

    void recordEvicted(String podKey) {
        if (!podsSeen.contains(podKey)) {
            podsSeen.add(podKey);
        }
        if (podsSeen.size() > MAX_PODS_SEEN) {
            podsSeen.subList(0, podsSeen.size() - MAX_PODS_SEEN).clear();
        }
    }

    public Integer getAttempt() { return attempt; }
    public void setAttempt(Integer attempt) { this.attempt = attempt; }
    public String getAttemptStartedAt() { return attemptStartedAt; }
    public void setAttemptStartedAt(String attemptStartedAt) { this.attemptStartedAt = attemptStartedAt; }
    public String getNextAttemptAt() { return nextAttemptAt; }
    public void setNextAttemptAt(String nextAttemptAt) { this.nextAttemptAt = nextAttemptAt; }
    public String getBlockedBy() { return blockedBy; }
    public void setBlockedBy(String blockedBy) { this.blockedBy = blockedBy; }
    public List<String> getPodsSeen() { return podsSeen; }
    public void setPodsSeen(List<String> podsSeen) { this.podsSeen = podsSeen == null ? new ArrayList<>() : podsSeen; }
    public String getLastApiError() { return lastApiError; }
    public void setLastApiError(String lastApiError) { this.lastApiError = lastApiError; }
    public String getBlockCause() { return blockCause; }
    public void setBlockCause(String blockCause) { this.blockCause = blockCause; }
    public String getBlockSince() { return blockSince; }
    public void setBlockSince(String blockSince) { this.blockSince = blockSince; }
    public List<String> getWorkloads() { return workloads; }
    public void setWorkloads(List<String> workloads) { this.workloads = workloads == null ? new ArrayList<>() : workloads; }
    public List<EscalationRecord> getEscalation() { return escalation; }
    public void setEscalation(List<EscalationRecord> escalation) { this.escalation = escalation == null ? new ArrayList<>() : escalation; }
}
