package dev.cks.nodeops.audit;

import dev.cks.nodeops.common.OperatorSettings;

/** The operator-wide settings an audit pass reads; each VMMapAudit's spec refines them. */
public record AuditSettings(boolean enabled, int intervalSeconds, int graceSeconds) {
    public static final AuditSettings DEFAULTS = new AuditSettings(true, 300, 900);

    public static AuditSettings of(OperatorSettings settings) {
        return new AuditSettings(settings.audit().enabled(), settings.audit().intervalSeconds(), settings.audit().graceSeconds());
    }

    public AuditSettings withEnabled(boolean on) {
        return new AuditSettings(on, intervalSeconds, graceSeconds);
    }
}
