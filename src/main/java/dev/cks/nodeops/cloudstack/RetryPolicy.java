package dev.cks.nodeops.cloudstack;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * Bounds for retrying a request: attempts, exponential backoff with jitter, and a total budget
 * so that a reconcile thread is never held for long by an unhealthy management server.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration maxTotalTime) {

    public static final RetryPolicy DEFAULT =
            new RetryPolicy(4, Duration.ofMillis(500), Duration.ofSeconds(5), Duration.ofSeconds(20));

    public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ZERO);

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        }
    }

    /**
     * The wait before retry number {@code retry} (1 = first retry): the exponential step capped at
     * {@code maxBackoff}, of which a random half is kept ("equal jitter") so that several operator
     * replicas do not hit a recovering server in lock step.
     */
    public Duration backoffBefore(int retry, DoubleSupplier random) {
        long initial = initialBackoff.toMillis();
        long cap = maxBackoff.toMillis();
        long step = initial;
        for (int i = 1; i < retry && step < cap; i++) {
            step *= 2;
        }
        step = Math.min(step, cap);
        long half = step / 2;
        return Duration.ofMillis(half + (long) (random.getAsDouble() * (step - half)));
    }
}
