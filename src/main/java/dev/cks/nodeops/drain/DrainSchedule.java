package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;

import dev.cks.nodeops.common.Timestamps;

/**
 * When a drain may act: attempts, their timeouts and the waits between them, all bounded by the
 * operation's deadline. A pure function of (options, state, deadline, now), so every edge is unit-tested.
 */
public final class DrainSchedule {
    public static final int DEFAULT_RETRY_INTERVAL_SECONDS = 30;

    public enum Kind {
        /** Work on attempt {@link Decision#attempt()} until {@link Decision#attemptEndsAt()}. */
        WORK,
        /** Between attempts: nothing to do until {@link Decision#nextAttemptAt()}. */
        WAIT,
        /** No attempt left, or no time left before the deadline for one. */
        GIVE_UP
    }

    /**
     * @param attemptStartedAt set for WORK; a new attempt starts now when it differs from the state's
     * @param why for GIVE_UP: a sentence saying why no further attempt is made
     */
    public record Decision(Kind kind, int attempt, Instant attemptStartedAt, Instant attemptEndsAt, Instant nextAttemptAt, String why) {
        /** Writes the attempt bookkeeping into the state the caller stores. */
        public void applyTo(DrainState state) {
            if (kind == Kind.GIVE_UP) {
                state.setNextAttemptAt(null);
                return;
            }
            state.setAttempt(attempt);
            if (attemptStartedAt != null) {
                state.setAttemptStartedAt(Timestamps.format(attemptStartedAt));
            }
            state.setNextAttemptAt(Timestamps.format(nextAttemptAt));
        }
    }

    private DrainSchedule() {
    }

    /**
     * @param deadline the operation's deadline; null when it has none
     */
    public static Decision decide(DrainOptions options, DrainState state, Instant deadline, Instant now) {
        int attempts = options.attempts();
        Duration timeout = Duration.ofSeconds(options.effectiveTimeoutSeconds());
        Integer current = state.getAttempt();
        if (deadline != null && !now.isBefore(deadline)) {
            return giveUp(current, "the operation's deadline " + Timestamps.format(deadline) + " has passed");
        }
        if (current == null || current < 1) {
            return start(1, now, timeout, deadline);
        }
        Instant nextAttemptAt = Timestamps.parse(state.getNextAttemptAt());
        if (nextAttemptAt != null) {
            return now.isBefore(nextAttemptAt) ? new Decision(Kind.WAIT, current, null, null, nextAttemptAt, null)
                    : start(current + 1, now, timeout, deadline);
        }
        Instant startedAt = Timestamps.parse(state.getAttemptStartedAt());
        if (startedAt == null) {
            // A state without a start time (hand-edited or from an older version): this attempt starts now.
            startedAt = now;
        }
        Instant endsAt = earlier(startedAt.plus(timeout), deadline);
        if (now.isBefore(endsAt)) {
            return new Decision(Kind.WORK, current, startedAt, endsAt, null, null);
        }
        if (current >= attempts) {
            return giveUp(current, "all " + attempts + " attempt(s) of " + options.effectiveTimeoutSeconds() + "s are used up");
        }
        int interval = retryIntervalSeconds(options);
        Instant next = now.plusSeconds(interval);
        // A wait that ends at the deadline leaves no time for the attempt it waits for.
        if (deadline != null && !next.isBefore(deadline)) {
            return giveUp(current, "waiting " + interval + "s (retryIntervalSeconds) for attempt " + (current + 1)
                    + " would reach the operation's deadline " + Timestamps.format(deadline));
        }
        return interval == 0 ? start(current + 1, now, timeout, deadline) : new Decision(Kind.WAIT, current, null, null, next, null);
    }

    static int retryIntervalSeconds(DrainOptions options) {
        Integer interval = options.getRetryIntervalSeconds();
        return interval == null || interval < 0 ? DEFAULT_RETRY_INTERVAL_SECONDS : interval;
    }

    private static Decision start(int attempt, Instant now, Duration timeout, Instant deadline) {
        return new Decision(Kind.WORK, attempt, now, earlier(now.plus(timeout), deadline), null, null);
    }

    private static Decision giveUp(Integer attempt, String why) {
        return new Decision(Kind.GIVE_UP, attempt == null ? 0 : attempt, null, null, null, why);
    }

    private static Instant earlier(Instant a, Instant b) {
        return b == null || a.isBefore(b) ? a : b;
    }
}
