package dev.cks.nodeops.operation;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Writes an operation's status now, before a step that must not be repeated after a restart (the
 * status JOSDK patches at the end of a reconcile would come too late if the process died in between).
 */
@FunctionalInterface
public interface StatusStore {
    void persist(CustomResource<?, ?> resource);

    /**
     * The field manager the controller's end-of-reconcile status is applied as (its configured fieldManager), told
     * once the controller is configured: in {@code prepareEventSources}, before any reconcile.
     */
    default void writeAs(String fieldManager) {
    }

    /** On the API server, as the same writer as JOSDK's end-of-reconcile status patch ({@link AppliedStatusStore}). */
    static StatusStore on(KubernetesClient client) {
        return new AppliedStatusStore(client);
    }
}
