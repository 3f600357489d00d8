package dev.cks.nodeops.operation;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport.BudgetHold;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;

/**
 * One drain step as both operations report it: the progress line, when to look again, and the one
 * rule for "blocked". Pure: the drain's result in, the tick out (it also updates the block memory in
 * the result's {@link DrainState}, which the caller stores).
 *
 * <p>Blocked means: PodDisruptionBudgets keep pods on the node and no pod has left it for
 * {@link #BLOCKED_AFTER}. A budget that holds pods back while earlier evictions are still leaving or
 * replacements come up (a {@code maxUnavailable} budget walking a node in waves) slows the drain but
 * does not block it, so neither the metric nor a Warning event fires for that.
 *
 * @param blocked for the {@code cks_drain_blocked} metric: true only while the drain is under way and blocked
 * @param announcement a Warning event to send: the drain became blocked, or blocked by another cause
 * @param report the drain's full account of what still keeps pods on the node (for a failure's message)
 */
public record DrainTick(DrainResult.Outcome outcome, String progress, Step next, boolean blocked, Optional<String> announcement,
        String report) {
    public static final Duration BLOCKED_AFTER = Duration.ofSeconds(10);

    public static DrainTick of(String node, DrainResult result, DrainOptions options, Instant now) {
        DrainState state = result.state();
        String holds = result.budgetHolds().stream().map(BudgetHold::describe).collect(Collectors.joining("; "));
        if (result.outcome() != DrainResult.Outcome.IN_PROGRESS) {
            forget(state);
            return new DrainTick(result.outcome(), progressLine(node, result, options, holds, null), Step.next(), false, Optional.empty(),
                    result.report());
        }
        if (result.looked()) {
            observe(state, result, now);
        }
        Duration blockedFor = blockedFor(state, now);
        Optional<String> announcement = Optional.empty();
        if (blockedFor != null && !state.getBlockCause().equals(state.getBlockAnnounced())) {
            state.setBlockAnnounced(state.getBlockCause());
            announcement = Optional.of("The drain of node " + node + " is blocked: no pod has left it for " + blockedFor.toSeconds()
                    + "s because " + holds + ". It carries on as soon as the budget allows another disruption.");
        }
        Step next = result.nextCheckAt() == null ? Step.next() : Step.at(result.nextCheckAt(), now);
        return new DrainTick(result.outcome(), progressLine(node, result, options, holds, blockedFor), next, blockedFor != null,
                announcement, result.report());
    }

    /** Remembers since when the same budgets have held pods while none left the node. */
    private static void observe(DrainState state, DrainResult result, Instant now) {
        String cause = result.budgetHolds().stream().map(BudgetHold::budget).sorted().distinct().collect(Collectors.joining(", "));
        if (cause.isEmpty()) {
            forget(state);
            return;
        }
        if (result.podsLeaving() || !cause.equals(state.getBlockCause())) {
            state.setBlockCause(cause);
            state.setBlockSince(Timestamps.format(now));
        }
    }

    private static void forget(DrainState state) {
        state.setBlockCause(null);
        state.setBlockSince(null);
        state.setBlockAnnounced(null);
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
                + (result.podsRemaining() > 0 ? ", " + result.podsRemaining() + " pod(s) to go" : "");
        if (holds.isEmpty()) {
            return line + ".";
        }
        return line + (blockedFor == null ? "; held back by " : "; blocked for " + blockedFor.toSeconds() + "s by ") + holds + ".";
    }
}
