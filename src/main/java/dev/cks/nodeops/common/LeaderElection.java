package dev.cks.nodeops.common;

import java.lang.management.ManagementFactory;
import java.util.Optional;

import jakarta.inject.Singleton;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;

/**
 * Two replicas are safe: only the holder of the Lease reconciles. The identity must differ per
 * process (two local processes may share a host name), hence the pid.
 */
@Singleton
public class LeaderElection extends LeaderElectionConfiguration {
    public LeaderElection(OperatorSettings settings) {
        super("cks-node-operator-leader", settings.namespace(), LEASE_DURATION_DEFAULT_VALUE, RENEW_DEADLINE_DEFAULT_VALUE,
                RETRY_PERIOD_DEFAULT_VALUE, settings.leaderElection().identity().orElseGet(LeaderElection::defaultIdentity), null, true);
    }

    private static String defaultIdentity() {
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("operator");
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
