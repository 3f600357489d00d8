package dev.cks.nodeops.audit;

import java.time.Instant;

/** A Kubernetes Node as the audit needs it. */
public record NodeView(String name, Instant created) {
}
