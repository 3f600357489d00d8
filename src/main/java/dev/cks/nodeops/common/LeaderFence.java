package dev.cks.nodeops.common;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * Checked by the leader right before each side effect — every write to the API server (status, nodes, Jobs,
 * evictions, events, the Lease) and every CloudStack write: if {@link LeaseDeadline} says the Lease is lost, the
 * process halts there and then, on the thread about to write.
 *
 * <p>The {@link LeaseWatchdog} halts a replica whose Lease is lost too, but from its own thread, every 250 ms: a
 * leader frozen past its Lease (a long GC pause, a stopped VM) resumes all its threads at once, and the reconcile
 * it was frozen in could send its next write before the watchdog's thread runs. This check cannot be overtaken:
 * it is made by the writing thread, from the Lease as last read and this replica's own clock, without a call to
 * the API server. What is left is the moment between the check and the request leaving the process; the margin
 * between the renew deadline (when the leader stops) and the lease duration (when a standby may take over) is for
 * that and for the replicas' clocks (docs/reliability.md, "Fencing").
 */
@Singleton
public class LeaderFence {
    private final String identity;
    private final LeaseDeadline deadline;
    private final Clock clock;
    private final Consumer<String> stop;

    @Inject
    public LeaderFence(OperatorSettings settings, Clock clock) {
        this(settings.leaderElection().identity().orElseGet(LeaderFence::defaultIdentity),
                Duration.ofSeconds(settings.leaderElection().renewDeadlineSeconds()), clock, LeaderElection::stopAtOnce);
    }

    LeaderFence(String identity, Duration renewDeadline, Clock clock, Consumer<String> stop) {
        this.identity = identity;
        this.deadline = new LeaseDeadline(identity, renewDeadline);
        this.clock = clock;
        this.stop = stop;
    }

    /** Halts this replica if it leads no more; {@code write} says what it was about to do, for the log. */
    public void beforeWrite(String write) {
        Optional<String> lost = deadline.lost(clock.instant());
        lost.ifPresent(why -> stop.accept(why + "; not sending " + write));
    }

    /** This replica's name in the Lease. */
    String identity() {
        return identity;
    }

    /** The deadline the watchdog keeps up to date from its reads of the Lease. */
    LeaseDeadline deadline() {
        return deadline;
    }

    /** Unique per process (two local processes may share a host name), hence the pid. */
    private static String defaultIdentity() {
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("operator");
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
