package dev.cks.nodeops.audit;

import java.time.Instant;

/**
 * A Kubernetes Node as the audit needs it.
 *
 * @param kubeletVersion {@code status.nodeInfo.kubeletVersion}, e.g. {@code v1.34.2}; null when not reported
 */
public record NodeView(String name, Instant created, String kubeletVersion) {
    public NodeView(String name, Instant created) {
        this(name, created, null);
    }
}
