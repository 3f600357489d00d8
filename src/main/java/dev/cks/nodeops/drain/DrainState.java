package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.EvictionApi.PodRef;

/**
 * The drain engine's resumable state for one node, stored by the caller in CR status so that a
 * restarted operator carries on with the same attempt and deadlines. How much of it the status keeps
 * once its node moved on is {@link #keepFor}'s one rule (docs/upgrade.md, "What status keeps").
 */
public class DrainState {
    /** Older entries of {@link #podsSeen} are dropped beyond this, so a huge node can't bloat the status. */
    static final int MAX_PODS_SEEN = 500;
    static final int MAX_WORKLOADS = 100;
    /** How many evicted pods' names a node's status shows while it is worked on; the count keeps the rest, the NodeDrained event the workloads. */
    public static final int LAST_NAMES = 3;

    /** What of a drain its node's next steps still read back; the rest leaves the status ({@link #keepFor}). */
    public enum ReadBack {
        /** The drain goes on (or may): everything it carries on with. */
        ALL,
        /** The drain ended; the soak's health gate still reads the workloads it evicted. */
        WORKLOADS,
        /** The node is done with: how many pods it evicted and the ladder's records, for users. */
        NOTHING
    }

    @JsonPropertyDescription("The drain attempt under way or last made, counted from 1; there are spec.drain.retries + 1 in all.")
    private Integer attempt;
    @JsonPropertyDescription("When the current attempt began; it lasts spec.drain.timeoutSeconds at most, and never past the operation's deadline.")
    private String attemptStartedAt;
    @JsonPropertyDescription("Between attempts: when the next one starts (spec.drain.retryIntervalSeconds after the last ended); empty while an attempt runs.")
    private String nextAttemptAt;
    @JsonPropertyDescription("What keeps the node from being drained, as users read it: the pods still there grouped by cause (e.g. a"
            + " PodDisruptionBudget allowing no disruption, with its numbers); empty when nothing does.")
    private String blockedBy;
    /**
     * The uids of the pods evicted in this drain and still on the node when it last looked, so that a pod leaving
     * is not sent again (a pod re-created under the same name has another uid). Only while the drain runs. A status
     * written by an earlier version holds namespace/name/uid here, which is read the same.
     */
    @JsonPropertyDescription("The uids of the pods this drain evicted that were still on the node when it last looked, so that none is evicted"
            + " twice; only while the drain runs.")
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private List<String> podsSeen = new ArrayList<>();
    @JsonPropertyDescription("How many pods this drain evicted.")
    private Integer podsEvicted;
    @JsonPropertyDescription("The last " + LAST_NAMES + " pods (namespace/name) this drain evicted, the latest last; only while the node is worked on.")
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private List<String> lastEvicted = new ArrayList<>();

    @JsonPropertyDescription("The last error the API server answered during this drain, its last 2000 characters at most.")
    private String lastApiError;
    @JsonPropertyDescription("The PodDisruptionBudgets (namespace/name, sorted) holding pods on the node while no pod leaves it; empty when none do.")
    private String blockCause;
    @JsonPropertyDescription("Since when blockCause has held the drain without a pod leaving the node: the steps of spec.drain.escalation count from it.")
    private String blockSince;
    @JsonPropertyDescription("The steps of spec.drain.escalation this drain took, each once per cause, with when and what came of it.")
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private List<EscalationRecord> escalation = new ArrayList<>();
    @JsonPropertyDescription("The controllers (Kind namespace/name) of the pods this drain evicted, at most " + MAX_WORKLOADS + "; kept until a"
            + " NodeUpgrade's soak has waited for them to be Ready again (spec.waitForDrainedWorkloads).")
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private List<String> workloads = new ArrayList<>();

    public static DrainState copyOf(DrainState state) {
        DrainState copy = new DrainState();
        if (state != null) {
            copy.attempt = state.attempt;
            copy.attemptStartedAt = state.attemptStartedAt;
            copy.nextAttemptAt = state.nextAttemptAt;
            copy.blockedBy = state.blockedBy;
            copy.podsSeen = new ArrayList<>(state.podsSeen);
            copy.podsEvicted = state.podsEvicted;
            copy.lastEvicted = new ArrayList<>(state.lastEvicted);
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

    /**
     * Drops what the node's next steps no longer read back, so that an operation over many dense nodes keeps a
     * status of a few hundred bytes per node: a drain that ended needs no {@link #podsSeen} (nothing is evicted
     * again), and a node done with needs neither the workloads (read by the soak alone) nor what explained a
     * drain under way (the node's error keeps the account of one that failed), nor the last names (the NodeDrained
     * event names its workloads) nor the attempt. The count of pods evicted and the escalation ladder's records stay.
     */
    public void keepFor(ReadBack readBack) {
        if (readBack == ReadBack.ALL) {
            return;
        }
        podsSeen.clear();
        if (readBack == ReadBack.NOTHING) {
            workloads.clear();
            lastEvicted.clear();
            attempt = null;
            attemptStartedAt = null;
            nextAttemptAt = null;
            blockedBy = null;
            lastApiError = null;
            blockCause = null;
            blockSince = null;
        }
    }

    /** "110 pod(s) evicted, of Deployment shop/web, …": what this drain evicted, for the NodeDrained event (which cuts it at 1 KiB). */
    public String evictedSummary() {
        int pods = podsEvicted == null ? 0 : podsEvicted;
        if (pods == 0) {
            return "no pod evicted";
        }
        return pods + " pod(s) evicted" + (workloads.isEmpty() ? "" : ", of " + String.join(", ", workloads));
    }

    void recordWorkload(String workload) {
        if (workload != null && !workloads.contains(workload) && workloads.size() < MAX_WORKLOADS) {
            workloads.add(workload);
        }
    }

    void recordEvicted(PodRef pod) {
        if (!evictedEarlier(pod)) {
            podsSeen.add(pod.uid());
            podsEvicted = (podsEvicted == null ? 0 : podsEvicted) + 1;
            lastEvicted.add(pod.ref());
            if (lastEvicted.size() > LAST_NAMES) {
                lastEvicted.subList(0, lastEvicted.size() - LAST_NAMES).clear();
            }
        }
        if (podsSeen.size() > MAX_PODS_SEEN) {
            podsSeen.subList(0, podsSeen.size() - MAX_PODS_SEEN).clear();
        }
    }

    /** Whether this drain evicted the pod (the same uid) while it was on the node. */
    boolean evictedEarlier(PodRef pod) {
        return podsSeen.contains(pod.uid()) || podsSeen.contains(pod.key());
    }

    /**
     * Forgets the evicted pods no longer on the node (in the view the step acts on; a view loses a pod only once
     * it is deleted, and a uid never comes back): a pod gone cannot be sent again, so while a drain runs
     * {@link #podsSeen} holds at most the pods still leaving, not the node's history.
     */
    void forgetGone(List<PodRef> onNode) {
        Set<String> present = new java.util.HashSet<>();
        onNode.forEach(pod -> {
            present.add(pod.uid());
            present.add(pod.key());
        });
        podsSeen.retainAll(present);
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
    public Integer getPodsEvicted() { return podsEvicted; }
    public void setPodsEvicted(Integer podsEvicted) { this.podsEvicted = podsEvicted; }
    public List<String> getLastEvicted() { return lastEvicted; }
    public void setLastEvicted(List<String> lastEvicted) { this.lastEvicted = lastEvicted == null ? new ArrayList<>() : lastEvicted; }

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
