package dev.cks.nodeops.common;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Pure: until when this replica may act as the leader, judged from the Lease as it last read it.
 *
 * <p>The elector checks its renew deadline only between two renew calls, and a call to an API server
 * that stopped answering hangs for the client's whole timeout and its retries: the old leader could
 * still be working when a standby takes the Lease (seen in a partition test: 4 s of overlap). A
 * renewal carries the renewer's own clock in {@code renewTime}, so this deadline is exact — our last
 * renewal seen plus the renew deadline — and it holds however long a call to the API server hangs.
 */
final class LeaseDeadline {
    private final String identity;
    private final Duration renewDeadline;
    /** Null while this replica does not lead. */
    private Instant until;
    private String takenBy;

    LeaseDeadline(String identity, Duration renewDeadline) {
        this.identity = identity;
        this.renewDeadline = renewDeadline;
    }

    /** The elector just acquired (or renewed) the Lease. */
    synchronized void startedLeading(Instant now) {
        until = now.plus(renewDeadline);
        takenBy = null;
    }

    /** A read of the Lease: our renewal moves the deadline on; another holder means it is lost (an empty one is our own release). */
    synchronized void read(String holder, Instant renewTime) {
        if (until == null || holder == null || holder.isEmpty()) {
            return;
        }
        if (!holder.equals(identity)) {
            takenBy = holder;
        } else if (renewTime != null && renewTime.plus(renewDeadline).isAfter(until)) {
            until = renewTime.plus(renewDeadline);
        }
    }

    /** Why this replica must stop now; empty while it may lead (or does not lead). */
    synchronized Optional<String> lost(Instant now) {
        if (until == null) {
            return Optional.empty();
        }
        if (takenBy != null) {
            return Optional.of("the Lease is held by " + takenBy);
        }
        return now.isAfter(until)
                ? Optional.of("not renewed since " + until.minus(renewDeadline) + ", more than the renew deadline of " + renewDeadline.toSeconds() + " s")
                : Optional.empty();
    }
}
