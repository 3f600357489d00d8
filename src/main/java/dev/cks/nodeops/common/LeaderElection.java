package dev.cks.nodeops.common;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.runtime.ShutdownEvent;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Two replicas are safe: only the holder of the Lease reconciles. The identity must differ per
 * process (two local processes may share a host name), hence the pid. `cks_operator_leader` is 1 on the
 * replica that holds the Lease, so "no replica leads" is an alert. Timings: see
 * {@link OperatorSettings.LeaderElection}.
 */
@Singleton
public class LeaderElection extends LeaderElectionConfiguration {
    public static final String LEADER_METRIC = "cks.operator.leader";
    /** The exit status of a replica that lost the Lease. */
    public static final int LOST_LEASE_EXIT_STATUS = 3;
    private static final Logger LOG = Logger.getLogger(LeaderElection.class);
    private final AtomicBoolean shuttingDown;

    static final String LEASE_NAME = "cks-node-operator-leader";

    @Inject
    public LeaderElection(OperatorSettings settings, MeterRegistry registry, KubernetesClient client, Clock clock) {
        this(settings, registry, new AtomicInteger(), settings.leaderElection().identity().orElseGet(LeaderElection::defaultIdentity), client, clock);
    }

    private LeaderElection(OperatorSettings settings, MeterRegistry registry, AtomicInteger leading, String identity, KubernetesClient client, Clock clock) {
        this(settings, registry, leading, new AtomicBoolean(), identity, new LeaseWatchdog(client, clock, settings.namespace(), LEASE_NAME, identity,
                Duration.ofSeconds(settings.leaderElection().renewDeadlineSeconds()), Duration.ofSeconds(settings.leaderElection().retryPeriodSeconds())));
    }

    private LeaderElection(OperatorSettings settings, MeterRegistry registry, AtomicInteger leading, AtomicBoolean shuttingDown, String identity,
            LeaseWatchdog watchdog) {
        super(LEASE_NAME, settings.namespace(), Duration.ofSeconds(settings.leaderElection().leaseDurationSeconds()),
                Duration.ofSeconds(settings.leaderElection().renewDeadlineSeconds()),
                Duration.ofSeconds(settings.leaderElection().retryPeriodSeconds()),
                identity,
                new LeaderCallbacks(() -> {
                    leading.set(1);
                    watchdog.startedLeading(why -> {
                        if (!shuttingDown.get()) {
                            stopAtOnce(why);
                        }
                    });
                }, () -> {
                    leading.set(0);
                    // On SIGTERM the operator stops the elector itself, which lets the Lease go: that is no loss to halt for.
                    if (!shuttingDown.get()) {
                        stopAtOnce("the elector could not renew it within the renew deadline");
                    }
                }, leader -> LOG.infof("The leader is %s.", leader)),
                // Never JOSDK's System.exit on stop leading: called from the shutdown hook, it waits for that hook forever.
                false);
        this.shuttingDown = shuttingDown;
        Gauge.builder(LEADER_METRIC, leading, AtomicInteger::get).description("1 while this replica holds the leader Lease")
                .strongReference(true).register(registry);
    }

    /**
     * A normal stop (SIGTERM) begins: from now on losing the Lease is expected. Observed before JOSDK's own
     * shutdown listener stops the elector (lower priority numbers are notified first).
     */
    void shuttingDown(@Observes @Priority(1) ShutdownEvent event) {
        shuttingDown.set(true);
    }

    /**
     * The Lease is lost: no write may follow, as another replica may take over. A graceful exit would let
     * reconciles in flight finish (status patches, evictions, CloudStack calls), so the process halts
     * at once; its Deployment starts it again as a standby.
     */
    private static void stopAtOnce(String why) {
        LOG.errorf("Lost the leader Lease (%s): halting now so that no write follows.", why);
        // halt runs no shutdown hook and flushes nothing: the line must reach the log first.
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(LOST_LEASE_EXIT_STATUS);
    }

    private static String defaultIdentity() {
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("operator");
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
