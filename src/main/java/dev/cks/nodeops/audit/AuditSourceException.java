package dev.cks.nodeops.audit;

/** CloudStack could not answer one of the audit's questions; the message is a sentence for the status. */
public class AuditSourceException extends RuntimeException {
    public AuditSourceException(String message, Throwable cause) {
        super(message, cause);
    }

    public AuditSourceException(String message) {
        super(message);
    }
}
