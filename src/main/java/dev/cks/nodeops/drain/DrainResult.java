package dev.cks.nodeops.drain;

import java.time.Instant;
import java.util.List;

/**
 * What one drain step achieved, with the state the caller stores in CR status and hands back to the next step.
 *
 * @param nextCheckAt for IN_PROGRESS: when the next step is due (the caller requeues for it)
 * @param report what still keeps the node from being drained; empty when nothing does
 * @param podsRemaining pods the drain still waits for; -1 when this step did not look (between attempts, API unreachable)
 * @param budgetHolds the PodDisruptionBudgets that keep pods on the node after this step (held back or refused with 429)
 * @param podsLeaving a pod was evicted in this step, or is still terminating: the drain is moving
 * @param heldPods the pods the budgets keep on the node, for the escalation ladder's selectors
 */
public record DrainResult(Outcome outcome, Instant nextCheckAt, String report, DrainState state, int podsRemaining,
        List<BlockedByReport.BudgetHold> budgetHolds, boolean podsLeaving, List<DrainEscalation.HeldPod> heldPods) {
    public enum Outcome {
        /** The node holds no pod the drain removes. */
        DONE,
        /** Call {@link NodeDrainer#step} again at {@link DrainResult#nextCheckAt()}. */
        IN_PROGRESS,
        /** All attempts (or the time before the deadline) are used up; the report says what blocks. */
        BLOCKED,
        /** The drain cannot work with these options (a pod refused by a filter, an invalid podSelector); nothing was evicted. */
        FAILED
    }

    public boolean finished() {
        return outcome != Outcome.IN_PROGRESS;
    }

    /** False between attempts or when the pods could not be listed: this step says nothing new about the node. */
    public boolean looked() {
        return podsRemaining >= 0;
    }
}
