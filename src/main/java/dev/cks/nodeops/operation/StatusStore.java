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

    /**
     * Replaces the stored status as a whole with this one, where an apply cannot write it: the stored one has a field of a
     * type the CRD no longer has (written by an older operator), and the API server refuses to apply over it.
     */
    default void replace(CustomResource<?, ?> resource) {
        persist(resource);
    }

    /** On the API server, as the same writer as JOSDK's end-of-reconcile status patch ({@link AppliedStatusStore}). */
    static StatusStore on(KubernetesClient client) {
        return new AppliedStatusStore(client);
    }
}
