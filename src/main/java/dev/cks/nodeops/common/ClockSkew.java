package dev.cks.nodeops.common;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Pure: how far this replica's clock is from the API server's, from one request — sent and answered by our
 * clock, its {@code Date} header (whole seconds) by the server's: the offset lies between {@code least} and
 * {@code most}.
 *
 * <p>Why it matters: Fabric8's elector lets a standby take the Lease once its own clock passes the holder's
 * {@code renewTime} plus the lease duration ({@code LeaderElector.canBecomeLeader}, fabric8io/kubernetes-client
 * 7.x: {@code !renewTime.plus(leaseDuration).isAfter(now())}), and the holder wrote {@code renewTime} with its
 * clock. The holder stops at its renewal plus the renew deadline by its own clock ({@link LeaseDeadline}); so a
 * standby whose clock is ahead of the holder's by {@code s} may take the Lease {@code s} early, and the two never
 * overlap only while {@code s} stays under the lease duration minus the renew deadline. Each replica checked
 * against the API server within a third of that margin keeps any two within two thirds of it, leaving the rest
 * for the time between the fence's check and a write.
 */
record ClockSkew(Duration least, Duration most) {
    /** The Date header's resolution: the server's second had begun, not ended. */
    private static final Duration DATE_RESOLUTION = Duration.ofSeconds(1);

    static ClockSkew measure(Instant sent, Instant answered, Instant serverDate) {
        return new ClockSkew(Duration.between(serverDate.plus(DATE_RESOLUTION), sent), Duration.between(serverDate, answered));
    }

    /** How far from the API server's clock a replica may run (either way). */
    static Duration tolerated(Duration leaseDuration, Duration renewDeadline) {
        return leaseDuration.minus(renewDeadline).dividedBy(3);
    }

    /** Why this replica must not take part in leader election; empty unless the offset is surely beyond the bound. */
    Optional<String> refusal(Duration bound, Duration leaseDuration, Duration renewDeadline) {
        boolean ahead = least.compareTo(bound) > 0;
        boolean behind = most.compareTo(bound.negated()) < 0;
        if (!ahead && !behind) {
            return Optional.empty();
        }
        long seconds = Math.round(least.plus(most).dividedBy(2).abs().toMillis() / 1000.0);
        return Optional.of("This replica's clock is " + seconds + " s " + (ahead ? "ahead of" : "behind") + " the API server's; leader election"
                + " tolerates at most " + bound.toSeconds() + " s (a third of the lease duration, " + leaseDuration.toSeconds() + " s, minus the renew"
                + " deadline, " + renewDeadline.toSeconds() + " s): a standby judges the leader's Lease by its own clock, so with this skew two"
                + " replicas could both lead. Synchronise this node's clock (NTP) and start the operator again.");
    }
}
