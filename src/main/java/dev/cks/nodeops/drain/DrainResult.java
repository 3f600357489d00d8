package dev.cks.nodeops.drain;

import java.time.Instant;
import java.util.List;

/**
 * What one drain step achieved, with the state the caller stores in CR status and hands back to the next step.
 * Built by the factory named after its outcome.
 *
 * @param nextCheckAt for IN_PROGRESS: when the next step is due (the caller requeues for it)
 * @param report what still keeps the node from being drained; empty when nothing does
 * @param podsLeft what the step found still on the node
 */
public record DrainResult(Outcome outcome, Instant nextCheckAt, String report, DrainState state, PodsLeft podsLeft) {
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

    /**
     * The pods a step found still on the node.
     *
     * @param count pods the drain still waits for; -1 when the step did not look (between attempts, API unreachable)
     * @param budgetHolds the PodDisruptionBudgets that keep pods on the node after this step (held back or refused with 429)
     * @param leaving a pod was evicted in this step, or is still terminating: the drain is moving
     * @param heldPods the pods the budgets keep on the node, for the escalation ladder's selectors
     */
    public record PodsLeft(int count, List<BlockedByReport.BudgetHold> budgetHolds, boolean leaving, List<DrainEscalation.HeldPod> heldPods) {
        /** The step did not look at the node's pods. */
        public static final PodsLeft UNSEEN = of(-1);

        /** Only how many: nothing holds them, none is leaving. */
        public static PodsLeft of(int count) {
            return new PodsLeft(count, List.of(), false, List.of());
        }
    }

    public static DrainResult done(DrainState state) {
        return new DrainResult(Outcome.DONE, null, "", state, PodsLeft.of(0));
    }

    /** @param podsRefused the pods a filter refused (0 when the options themselves are invalid) */
    public static DrainResult failed(DrainState state, String report, int podsRefused) {
        return new DrainResult(Outcome.FAILED, null, report, state, PodsLeft.of(podsRefused));
    }

    public static DrainResult gaveUp(DrainState state, String report, PodsLeft left) {
        return new DrainResult(Outcome.BLOCKED, null, report, state, left);
    }

    public static DrainResult inProgress(DrainState state, String report, Instant nextCheckAt, PodsLeft left) {
        return new DrainResult(Outcome.IN_PROGRESS, nextCheckAt, report, state, left);
    }

    public boolean finished() {
        return outcome != Outcome.IN_PROGRESS;
    }

    /** False between attempts or when the pods could not be listed: this step says nothing new about the node. */
    public boolean looked() {
        return podsLeft.count() >= 0;
    }
}
