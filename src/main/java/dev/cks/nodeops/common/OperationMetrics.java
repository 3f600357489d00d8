package dev.cks.nodeops.common;

import java.time.Duration;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counters and timers of NodeUpgrade and ScaleDown operations, one shape for both kinds:
 * - `cks_operations_total{kind,outcome}`: finished operations;
 * - `cks_node_step_seconds{kind,step}`: how long each per-node step took (drain, upgrade, ready wait), a histogram;
 * - `cks_drain_evictions_total{kind,result}`: eviction requests by what they got (evicted, gone, blocked = 429, error).
 * What an operation is doing now (`cks_operation_phase`, `cks_drain_blocked`) is its status, exported from
 * there by {@code monitoring.StatusMetrics} so that it survives a leader failover.
 */
@ApplicationScoped
public class OperationMetrics {
    private final MeterRegistry registry;

    public OperationMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void finished(String kind, String outcome) {
        registry.counter("cks.operations", "kind", kind, "outcome", outcome).increment();
    }

    public void nodeStep(String kind, String step, Duration took) {
        DurationHistogram.NODE_STEP.timer("cks.node.step").tag("kind", kind).tag("step", step)
                .description("Time a per-node step took").register(registry).record(took);
    }

    public void evictionAnswered(String kind, String result) {
        registry.counter("cks.drain.evictions", "kind", kind, "result", result).increment();
    }
}
