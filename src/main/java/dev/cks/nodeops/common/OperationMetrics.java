package dev.cks.nodeops.common;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Metrics of NodeUpgrade and ScaleDown operations, one shape for both kinds:
 * - `cks_operation_phase{kind,name,phase}`: 1 for the phase an operation is in (alerts on Failed/RolledBack);
 * - `cks_drain_blocked{kind,name,node}`: 1 while a node's drain is blocked (alert after 30 min);
 * - `cks_operations_total{kind,outcome}`: finished operations;
 * - `cks_node_step_seconds{kind,step}`: how long each per-node step took (drain, upgrade, ready wait);
 * - `cks_drain_evictions_total{kind,result}`: eviction requests by what they got (evicted, gone, blocked = 429, error).
 */
@ApplicationScoped
public class OperationMetrics {
    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> gauges = new ConcurrentHashMap<>();
    private final Map<String, String> currentPhase = new ConcurrentHashMap<>();

    public OperationMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void phase(String kind, String name, String phase) {
        String key = kind + "/" + name;
        String previous = currentPhase.put(key, phase);
        if (previous != null && !previous.equals(phase)) {
            gauge("cks.operation.phase", "kind", kind, "name", name, "phase", previous).set(0);
        }
        gauge("cks.operation.phase", "kind", kind, "name", name, "phase", phase).set(1);
    }

    public void drainBlocked(String kind, String name, String node, boolean blocked) {
        gauge("cks.drain.blocked", "kind", kind, "name", name, "node", node).set(blocked ? 1 : 0);
    }

    public void finished(String kind, String outcome) {
        registry.counter("cks.operations", "kind", kind, "outcome", outcome).increment();
    }

    public void nodeStep(String kind, String step, Duration took) {
        Timer.builder("cks.node.step").tag("kind", kind).tag("step", step)
                .description("Time a per-node step took").register(registry).record(took);
    }

    public void evictionAnswered(String kind, String result) {
        registry.counter("cks.drain.evictions", "kind", kind, "result", result).increment();
    }

    /** Forgets a deleted operation's series, so dashboards don't show it forever. */
    public void forget(String kind, String name) {
        currentPhase.remove(kind + "/" + name);
        registry.getMeters().stream()
                .filter(m -> kind.equals(m.getId().getTag("kind")) && name.equals(m.getId().getTag("name")))
                .forEach(registry::remove);
        gauges.keySet().removeIf(k -> k.contains("|" + kind + "|") && k.contains("|" + name + "|"));
    }

    private AtomicInteger gauge(String meter, String... tags) {
        String key = meter + "|" + String.join("|", tags) + "|";
        return gauges.computeIfAbsent(key, k -> {
            AtomicInteger value = new AtomicInteger();
            Gauge.builder(meter, value, AtomicInteger::get).tags(tags).register(registry);
            return value;
        });
    }
}
