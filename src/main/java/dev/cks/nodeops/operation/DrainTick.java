package dev.cks.nodeops.operation;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport.BudgetHold;
import dev.cks.nodeops.drain.DrainEscalation;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.EscalationStep;

/**
 * One drain step as both operations report it: the progress line, when to look again, the one rule for
 * "blocked", and the escalation ladder's steps that came due. Pure: the drain's result in, the tick out
 * (it also updates the block memory and the ladder's records in the result's {@link DrainState}, which
 * the caller stores).
 *
 * <p>Blocked means: PodDisruptionBudgets keep pods on the node and no pod has left it for
 * {@link #BLOCKED_AFTER}. A budget that holds pods back while earlier evictions are still leaving or
 * replacements come up (a {@code maxUnavailable} budget walking a node in waves) slows the drain but
 * does not block it, so neither the metric nor the ladder fires for that.
 *
 * @param blocked for the {@code cks_drain_blocked} metric: true only while the drain is under way and blocked
 * @param warnings Warning events to send: the ladder's Warn steps taken now (by default one per cause, after 10 s)
 * @param deletions pods the ladder's DeletePods steps delete now (only pods a step's selector opted in)
 * @param giveUp the node is given up now (SkipNode, Fail or RollBack) by a ladder step, or because the drain
 *     gave up and the ladder says what that means; empty: the operation's own default when the drain gave up
 * @param why the give-up's reason, or the drain's account of what still keeps pods on the node
 * @param deleted what the deletions came to, per pod; empty when none were made
 */
public record DrainTick(DrainResult.Outcome outcome, String progress, Step next, boolean blocked, List<String> warnings,
        List<DrainEscalation.Deletion> deletions, Optional<EscalationStep.Action> giveUp, String why, String deleted) {
    public static final Duration BLOCKED_AFTER = DrainEscalation.DEFAULT_WARN_AFTER;

    public static DrainTick of(String node, DrainResult result, DrainOptions options, Instant now) {
        DrainState state = result.state();
        String holds = result.podsLeft().budgetHolds().stream().map(BudgetHold::describe).collect(Collectors.joining("; "));
        List<EscalationStep> ladder = DrainEscalation.ladder(options);
        if (result.outcome() != DrainResult.Outcome.IN_PROGRESS) {
            forget(state);
            Optional<EscalationStep.Action> giveUp = result.outcome() == DrainResult.Outcome.BLOCKED
                    ? DrainEscalation.onGivingUp(ladder, result.podsLeft().heldPods()).map(EscalationStep::getAction) : Optional.empty();
            return new DrainTick(result.outcome(), progressLine(node, result, options, holds, null), Step.next(), false, List.of(), List.of(),
                    giveUp, result.report(), "");
        }
        if (result.looked()) {
            observe(state, result, now);
        }
        Duration blockedFor = blockedFor(state, now);
        DrainEscalation.Decision decision = blockedFor == null ? new DrainEscalation.Decision(List.of(), List.of(), Optional.empty(), "")
                : DrainEscalation.decide(ladder, state, node, state.getBlockCause(), holds, result.podsLeft().heldPods(), blockedFor, now);
        Step next = result.nextCheckAt() == null ? Step.next() : Step.at(result.nextCheckAt(), now);
        return new DrainTick(result.outcome(), progressLine(node, result, options, holds, blockedFor), next, blockedFor != null,
                decision.warnings(), decision.deletions(), decision.giveUp(), decision.giveUp().isPresent() ? decision.why() : result.report(), "");
    }

    /** The same tick with what its deletions came to; the drain looks again soon, as pods are leaving. */
    public DrainTick withDeleted(String outcome) {
        return new DrainTick(outcome(), progress, Step.next(), blocked, warnings, deletions, giveUp, why, outcome);
    }

    /** Remembers since when the same budgets have held pods while none left the node. */
    private static void observe(DrainState state, DrainResult result, Instant now) {
        String cause = result.podsLeft().budgetHolds().stream().map(BudgetHold::budget).sorted().distinct().collect(Collectors.joining(", "));
        if (cause.isEmpty()) {
            forget(state);
            return;
        }
        if (result.podsLeft().leaving() || !cause.equals(state.getBlockCause())) {
            state.setBlockCause(cause);
            state.setBlockSince(Timestamps.format(now));
        }
    }

    private static void forget(DrainState state) {
        state.setBlockCause(null);
        state.setBlockSince(null);
    }

    /** How long the drain has been blocked; null when it is not (yet) blocked. */
    /** How long budgets have held the node's pods with none leaving, once that is {@link #BLOCKED_AFTER} or more; else null. */
    public static Duration blockedFor(DrainState state, Instant now) {
        Instant since = Timestamps.parse(state.getBlockSince());
        if (state.getBlockCause() == null || since == null) {
            return null;
        }
        Duration held = Duration.between(since, now);
        return held.compareTo(BLOCKED_AFTER) >= 0 ? held : null;
    }

    private static String progressLine(String node, DrainResult result, DrainOptions options, String holds, Duration blockedFor) {
        int attempt = Objects.requireNonNullElse(result.state().getAttempt(), 1);
        String line = "Draining node " + node + " (attempt " + attempt + "/" + options.attempts() + ")"
                + (result.podsLeft().count() > 0 ? ", " + result.podsLeft().count() + " pod(s) to go" : "");
        if (holds.isEmpty()) {
            return line + ".";
        }
        return line + (blockedFor == null ? "; held back by " : "; blocked for " + blockedFor.toSeconds() + "s by ") + holds + ".";
    }
}
