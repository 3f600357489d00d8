package dev.cks.nodeops.common;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * While this replica leads: reads the Lease every retry period on one thread and, on another, stops the
 * replica as soon as {@link LeaseDeadline} says the Lease is lost — so a read (or the elector's renewal)
 * hanging on an API server that stopped answering cannot keep an old leader working.
 */
final class LeaseWatchdog {
    private static final Logger LOG = Logger.getLogger(LeaseWatchdog.class);
    private static final long CHECK_MILLIS = 250;

    private final KubernetesClient client;
    private final Clock clock;
    private final String namespace;
    private final String lease;
    private final Duration readEvery;
    private final LeaseDeadline deadline;
    private ScheduledExecutorService threads;

    /** @param deadline shared with the {@link LeaderFence}, which checks it before each write */
    LeaseWatchdog(KubernetesClient client, Clock clock, String namespace, String lease, LeaseDeadline deadline, Duration readEvery) {
        this.client = client;
        this.clock = clock;
        this.namespace = namespace;
        this.lease = lease;
        this.readEvery = readEvery;
        this.deadline = deadline;
    }

    /** Starts watching; {@code stop} is told why once the Lease is lost. */
    synchronized void startedLeading(Consumer<String> stop) {
        deadline.startedLeading(clock.instant());
        if (threads != null) {
            return;
        }
        threads = Executors.newScheduledThreadPool(2, work -> {
            Thread thread = new Thread(work, "lease-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        threads.scheduleWithFixedDelay(this::read, readEvery.toMillis(), readEvery.toMillis(), TimeUnit.MILLISECONDS);
        threads.scheduleWithFixedDelay(() -> deadline.lost(clock.instant()).ifPresent(stop), CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void read() {
        try {
            Lease current = client.leases().inNamespace(namespace).withName(lease).get();
            if (current != null && current.getSpec() != null) {
                deadline.read(current.getSpec().getHolderIdentity(),
                        current.getSpec().getRenewTime() == null ? null : current.getSpec().getRenewTime().toInstant());
            }
        } catch (RuntimeException e) {
            // No answer is no renewal seen: the deadline decides.
            LOG.debugf("could not read the leader Lease: %s", e.getMessage());
        }
    }
}
