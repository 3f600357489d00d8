package dev.cks.nodeops.common;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * Two replicas are safe: only the holder of the Lease reconciles, and it writes nothing once the Lease is lost
 * ({@link LeaderFence}). `cks_operator_leader` is 1 on the
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
    private final KubernetesClient client;
    private final Clock clock;
    private final String namespace;
    private final String identity;

    static final String LEASE_NAME = "cks-node-operator-leader";
    /** Each of the release's two calls (read, patch), and the clock's measurement at start, gives up after this. */
    private static final int RELEASE_TIMEOUT_MILLIS = 3000;
    /** The API's MicroTime (RFC 3339 with exactly six fractional digits), as a Lease's times are written. */
    private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSX").withZone(ZoneOffset.UTC);

    @Inject
    public LeaderElection(OperatorSettings settings, MeterRegistry registry, KubernetesClient client, Clock clock, LeaderFence fence) {
        this(settings, registry, new AtomicInteger(), new AtomicBoolean(), fence.identity(), new LeaseWatchdog(client, clock, settings.namespace(),
                LEASE_NAME, fence.deadline(), Duration.ofSeconds(settings.leaderElection().retryPeriodSeconds())), client, clock);
    }


    private LeaderElection(OperatorSettings settings, MeterRegistry registry, AtomicInteger leading, AtomicBoolean shuttingDown, String identity,
            LeaseWatchdog watchdog, KubernetesClient client, Clock clock) {
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
        this.client = client;
        this.clock = clock;
        this.namespace = settings.namespace();
        this.identity = identity;
        Gauge.builder(LEADER_METRIC, leading, AtomicInteger::get).description("1 while this replica holds the leader Lease")
                .strongReference(true).register(registry);
    }

    /**
     * Before this replica joins the election (JOSDK starts the elector on the same event, later): one request to the
     * API server measures this replica's clock against the server's ({@link ClockSkew}); a replica whose clock is
     * surely off by more than the elector tolerates refuses to start, naming the skew. An API server that does not
     * answer in time leaves the clock unmeasured: the operator starts (it must, during a control-plane upgrade) and
     * says so.
     */
    void refuseToRunWithASkewedClock(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event) {
        Optional<ClockSkew> skew = measureClock();
        if (skew.isEmpty()) {
            return;
        }
        Optional<String> refusal = skew.get().refusal(ClockSkew.tolerated(getLeaseDuration(), getRenewDeadline()), getLeaseDuration(), getRenewDeadline());
        if (refusal.isPresent()) {
            LOG.error(refusal.get());
            throw new IllegalStateException(refusal.get());
        }
    }

    private Optional<ClockSkew> measureClock() {
        try {
            var http = client.getHttpClient();
            Instant sent = clock.instant();
            var answer = http.sendAsync(http.newHttpRequestBuilder().uri(client.getMasterUrl().toURI().resolve("/version"))
                    .timeout(RELEASE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS).build(), String.class).get(RELEASE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            Instant answered = clock.instant();
            String date = answer.header("Date");
            if (date == null) {
                LOG.warn("The API server's answer has no Date header: this replica's clock is not checked against it.");
                return Optional.empty();
            }
            return Optional.of(ClockSkew.measure(sent, answered, DateTimeFormatter.RFC_1123_DATE_TIME.parse(date, Instant::from)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (Exception unanswered) {
            LOG.warnf("Could not check this replica's clock against the API server's (%s): leader election relies on the replicas' clocks"
                    + " being synchronised (docs/reliability.md).", unanswered.getMessage());
            return Optional.empty();
        }
    }

    /**
     * A normal stop (SIGTERM) begins: from now on losing the Lease is expected. Observed before JOSDK's own
     * shutdown listener stops the elector (lower priority numbers are notified first).
     */
    void shuttingDown(@Observes @Priority(1) ShutdownEvent event) {
        shuttingDown.set(true);
    }

    /**
     * After JOSDK has stopped leading (its shutdown observer has the default priority, this one runs
     * later): JOSDK builds its elector without releaseOnCancel, so a stopped leader's Lease would keep the
     * standby waiting a whole lease duration. Give it up as client-go's ReleaseOnCancel does — no holder,
     * a one-second lease — and only if this replica still holds it: the resourceVersion read is the
     * patch's precondition, so a Lease taken over meanwhile is left alone.
     */
    void releaseLease(@Observes @Priority(5000) ShutdownEvent event) {
        // JOSDK closed the operator's client as it stopped: a short-lived one from the same configuration,
        // without its retries and with short timeouts, as the stop waits for this: with the API server gone,
        // the operator's retrying client would keep the pod in its grace period until the kubelet kills it.
        Config bounded = new ConfigBuilder(client.getConfiguration()).withRequestRetryBackoffLimit(0)
                .withConnectionTimeout(RELEASE_TIMEOUT_MILLIS).withRequestTimeout(RELEASE_TIMEOUT_MILLIS).build();
        try (KubernetesClient releasing = new KubernetesClientBuilder().withConfig(bounded).build()) {
            Lease lease = releasing.leases().inNamespace(namespace).withName(LEASE_NAME).get();
            if (lease == null || lease.getSpec() == null || !identity.equals(lease.getSpec().getHolderIdentity())) {
                return;
            }
            releasing.leases().inNamespace(namespace).withName(LEASE_NAME).patch(PatchContext.of(PatchType.JSON_MERGE), """
                    {"metadata":{"resourceVersion":"%s"},"spec":{"holderIdentity":null,"leaseDurationSeconds":1,"renewTime":"%s"}}"""
                    .formatted(lease.getMetadata().getResourceVersion(), MICRO_TIME.format(Instant.now(clock))));
            LOG.info("Gave the leader Lease up on shutdown.");
        } catch (KubernetesClientException e) {
            // A conflict (taken over meanwhile) or no API server: the Lease then expires as it would have.
            LOG.warnf("Could not give the leader Lease up on shutdown (%s); it expires after its lease duration.", e.getMessage());
        }
    }

    /**
     * The Lease is lost: no write may follow, as another replica may take over. A graceful exit would let
     * reconciles in flight finish (status patches, evictions, CloudStack calls), so the process halts
     * at once; its Deployment starts it again as a standby.
     */
    static void stopAtOnce(String why) {
        LOG.errorf("Lost the leader Lease (%s): halting now so that no write follows.", why);
        // halt runs no shutdown hook and flushes nothing: the line must reach the log first.
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(LOST_LEASE_EXIT_STATUS);
    }
}
