package dev.cks.nodeops.operation;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
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
     * A merge patch of the status alone, without resourceVersion: only the leader writes an operation's
     * status, so there is no other writer to conflict with.
     */
    static StatusStore on(KubernetesClient client) {
        return resource -> {
            CustomResource<?, ?> copy = emptyLike(resource);
            copy.setMetadata(new ObjectMetaBuilder().withName(resource.getMetadata().getName()).build());
            setStatus(copy, resource.getStatus());
            HasMetadata patched = client.resource(copy).patchStatus();
            resource.getMetadata().setResourceVersion(patched.getMetadata().getResourceVersion());
        };
    }

    private static CustomResource<?, ?> emptyLike(CustomResource<?, ?> resource) {
        try {
            return resource.getClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(resource.getClass() + " has no public no-argument constructor", e);
        }
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static void setStatus(CustomResource copy, Object status) {
        copy.setStatus(status);
    }
}
