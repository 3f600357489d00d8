package dev.cks.nodeops.audit;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import dev.cks.nodeops.audit.VmMapFinding.Type;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * {@code cks_vmmap_findings{audit,type}}: current findings of each type (zero when none, so alerts can
 * use the series without absent()); {@code cks_vmmap_audit_duration_seconds{audit}}: time of complete runs.
 */
@ApplicationScoped
public class AuditMetrics {
    static final String FINDINGS = "cks.vmmap.findings";
    static final String DURATION = "cks.vmmap.audit.duration";

    private final MeterRegistry registry;
    private final Map<String, Map<Type, AtomicInteger>> findingsByAudit = new ConcurrentHashMap<>();

    public AuditMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    public void recordRun(String auditName, Map<Type, Integer> findingsByType, Duration duration) {
        Map<Type, AtomicInteger> gauges = findingsByAudit.computeIfAbsent(auditName, this::registerGauges);
        gauges.forEach((type, gauge) -> gauge.set(findingsByType.getOrDefault(type, 0)));
        Timer.builder(DURATION).description("Time of one complete VM-map audit run").tag("audit", auditName)
                .register(registry).record(duration);
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
