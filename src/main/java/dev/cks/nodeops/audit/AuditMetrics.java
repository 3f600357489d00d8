package dev.cks.nodeops.audit;

import java.time.Duration;
import java.util.Locale;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import dev.cks.nodeops.common.DurationHistogram;

/**
 * What the audit's runs did: {@code cks_vmmap_audit_duration_seconds{audit}} (time of runs that
 * compared) and {@code cks_vmmap_audit_runs_total{audit,outcome}}. Findings and the time of the last
 * complete run are the audit's status, exported from there by {@code monitoring.StatusMetrics}.
 */
@ApplicationScoped
public class AuditMetrics {
    static final String DURATION = "cks.vmmap.audit.duration";
    static final String RUNS = "cks.vmmap.audit.runs";

    /** The `outcome` label of {@code cks_vmmap_audit_runs_total}. */
    public enum RunOutcome {
        /** All three views compared. */
        COMPLETE,
        /** The Node list could not be read: only the VM map and the VMs were compared. */
        PARTIAL,
        /** Nothing compared on purpose: suspended, or the cluster is not Running/Alert or not CloudManaged. */
        SKIPPED,
        /** The cluster's state or map changed during the run, so nothing was reported. */
        CHANGED,
        /** CloudStack did not answer. */
        UNREACHABLE,
        /** Anything else, e.g. no CKS cluster found. */
        ERROR;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final MeterRegistry registry;

    public AuditMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A run that compared the views: all three, or (partial) the map and the VMs only. */
    public void recordComparison(String auditName, Duration duration, boolean allViews) {
        DurationHistogram.AUDIT_RUN.timer(DURATION).description("Time of one VM-map audit run that compared").tag("audit", auditName)
                .register(registry).record(duration);
        countRun(auditName, allViews ? RunOutcome.COMPLETE : RunOutcome.PARTIAL);
    }

    public void countRun(String auditName, RunOutcome outcome) {
        Counter.builder(RUNS).description("VM-map audit runs by outcome").tag("audit", auditName).tag("outcome", outcome.label())
                .register(registry).increment();
    }
}
