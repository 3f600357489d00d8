package dev.cks.nodeops.common;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;

import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;

/**
 * Two replicas are safe: only the holder of the Lease reconciles. The identity must differ per
 * process (two local processes may share a host name), hence the pid. Timings: see
 * {@link OperatorSettings.LeaderElection}.
 */
@Singleton
public class LeaderElection extends LeaderElectionConfiguration {
    private static final Logger LOG = Logger.getLogger(LeaderElection.class);
    /** The exit status of a replica that lost the Lease. */
    public static final int LOST_LEASE_EXIT_STATUS = 3;

    public LeaderElection(OperatorSettings settings) {
        super("cks-node-operator-leader", settings.namespace(), Duration.ofSeconds(settings.leaderElection().leaseDurationSeconds()),
                Duration.ofSeconds(settings.leaderElection().renewDeadlineSeconds()),
                Duration.ofSeconds(settings.leaderElection().retryPeriodSeconds()),
                settings.leaderElection().identity().orElseGet(LeaderElection::defaultIdentity),
                new LeaderCallbacks(() -> LOG.info("Leading: this replica reconciles now."), LeaderElection::stopAtOnce,
                        leader -> LOG.infof("The leader is %s.", leader)),
                true);
    }

    /**
     * The Lease is lost: no write may follow, as another replica may take over. A graceful exit would let
     * reconciles in flight finish (status patches, evictions, CloudStack calls), so the process halts
     * at once; its Deployment starts it again as a standby.
     */
    private static void stopAtOnce() {
        LOG.error("Lost the leader Lease (not renewed within the renew deadline): halting now so that no write follows.");
        System.err.flush();
        Runtime.getRuntime().halt(LOST_LEASE_EXIT_STATUS);
    }

    private static String defaultIdentity() {
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("operator");
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
