package dev.cks.nodeops.monitoring;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The operator SDK's own metrics per controller (reconciliations started, succeeded, failed, their
 * duration, events received, the queue) in the operator's registry, so /q/metrics shows them.
 * Quarkus Operator SDK 7.7.3 means to do this itself, but in a packaged (prod) run it hands JOSDK its
 * Metrics before the registry is bound and JOSDK keeps the no-op one: no reconcile was ever counted
 * (quarkiverse/quarkus-operator-sdk#1385, fixed upstream after this version). This producer replaces its
 * default bean with the same implementation built on the injected registry. Per controller, not per
 * resource: an operation's name as a label would leave series behind for every operation ever run.
 */
@Singleton
public class ReconcileMetrics {
    @Produces
    @Singleton
    Metrics metrics(MeterRegistry registry) {
        return MicrometerMetricsV2.newBuilder(registry).build();
    }
}
