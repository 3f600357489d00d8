package dev.cks.nodeops.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.enterprise.context.ApplicationScoped;

import dev.cks.nodeops.audit.VmMapFinding.Type;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * {@code cks_vmmap_findings{audit,type}}: current findings of each type (zero when none, so alerts can
 * use the series without absent()); {@code cks_vmmap_audit_duration_seconds{audit}}: time of complete
 * runs; {@code cks_vmmap_audit_last_complete_run_seconds{audit}}: when the last complete run started
 * (epoch seconds), so "the audit stopped running" is an alert; {@code cks_vmmap_audit_runs_total{audit,outcome}}:
 * runs by outcome (complete, skipped, changed, unreachable, error).
 */
@ApplicationScoped
public class AuditMetrics {
    static final String FINDINGS = "cks.vmmap.findings";
    static final String DURATION = "cks.vmmap.audit.duration";
    static final String LAST_COMPLETE_RUN = "cks.vmmap.audit.last.complete.run";
    static final String RUNS = "cks.vmmap.audit.runs";

    private final MeterRegistry registry;
    private final Map<String, Map<Type, AtomicInteger>> findingsByAudit = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> lastCompleteRunByAudit = new ConcurrentHashMap<>();

    public AuditMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void recordRun(String auditName, Map<Type, Integer> findingsByType, Instant startedAt, Duration duration) {
        Map<Type, AtomicInteger> gauges = findingsByAudit.computeIfAbsent(auditName, this::registerGauges);
        gauges.forEach((type, gauge) -> gauge.set(findingsByType.getOrDefault(type, 0)));
        Timer.builder(DURATION).description("Time of one complete VM-map audit run").tag("audit", auditName)
                .register(registry).record(duration);
        lastCompleteRunByAudit.computeIfAbsent(auditName, name -> {
            AtomicLong value = new AtomicLong();
            Gauge.builder(LAST_COMPLETE_RUN, value, AtomicLong::get).description("Start of the last complete VM-map audit run")
                    .baseUnit("seconds").tag("audit", name).register(registry);
            return value;
        }).set(startedAt.getEpochSecond());
        countRun(auditName, "complete");
    }

    /** A run that compared nothing: skipped, cluster changed meanwhile, CloudStack unreachable, or no cluster. */
    public void countRun(String auditName, String outcome) {
        Counter.builder(RUNS).description("VM-map audit runs by outcome").tag("audit", auditName).tag("outcome", outcome)
                .register(registry).increment();
    }

    private Map<Type, AtomicInteger> registerGauges(String auditName) {
        Map<Type, AtomicInteger> gauges = new EnumMap<>(Type.class);
        for (Type type : Type.values()) {
            AtomicInteger value = new AtomicInteger();
            Gauge.builder(FINDINGS, value, AtomicInteger::get).description("Current VM-map audit findings")
                    .tag("audit", auditName).tag("type", type.name()).register(registry);
            gauges.put(type, value);
        }
        return gauges;
    }
}
