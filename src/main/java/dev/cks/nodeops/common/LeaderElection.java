package dev.cks.nodeops.common;

import java.lang.management.ManagementFactory;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Two replicas are safe: only the holder of the Lease reconciles. The identity must differ per
 * process (two local processes may share a host name), hence the pid. `cks_operator_leader` is 1 on the
 * replica that holds the Lease, so "no replica leads" is an alert.
 */
@Singleton
public class LeaderElection extends LeaderElectionConfiguration {
    public static final String LEADER_METRIC = "cks.operator.leader";

    @Inject
    public LeaderElection(OperatorSettings settings, MeterRegistry registry) {
        this(settings, registry, new AtomicInteger());
    }

    private LeaderElection(OperatorSettings settings, MeterRegistry registry, AtomicInteger leading) {
        super("cks-node-operator-leader", settings.namespace(), LEASE_DURATION_DEFAULT_VALUE, RENEW_DEADLINE_DEFAULT_VALUE,
                RETRY_PERIOD_DEFAULT_VALUE, settings.leaderElection().identity().orElseGet(LeaderElection::defaultIdentity),
                new LeaderCallbacks(() -> leading.set(1), () -> leading.set(0), leader -> { }), true);
        Gauge.builder(LEADER_METRIC, leading, AtomicInteger::get).description("1 while this replica holds the leader Lease")
                .strongReference(true).register(registry);
    }

    private static String defaultIdentity() {
        String host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("operator");
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
