package dev.cks.nodeops.audit;

/** Where the audit announces findings: Kubernetes Events on the VMMapAudit in production. */
public interface AuditEvents {
    String DRIFT = "VmMapDrift";
    String IN_SYNC = "VmMapInSync";

    void warning(VMMapAudit audit, String reason, String message);

    void normal(VMMapAudit audit, String reason, String message);
}
