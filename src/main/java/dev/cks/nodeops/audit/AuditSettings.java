package dev.cks.nodeops.audit;

import dev.cks.nodeops.common.OperatorSettings;

/** The operator-wide settings an audit pass reads; each VMMapAudit's spec refines them. */
public record AuditSettings(boolean enabled) {
    public static AuditSettings of(OperatorSettings settings) {
        return new AuditSettings(settings.audit().enabled());
    }
}
