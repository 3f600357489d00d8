package dev.cks.nodeops.operation;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Writes an operation's status now, before a step that must not be repeated after a restart (the
 * status JOSDK patches at the end of a reconcile would come too late if the process died in between).
 */
@FunctionalInterface
public interface StatusStore {
    void persist(CustomResource<?, ?> resource);

    /**
     * Replaces the status as a whole (a JSON patch that sets {@code /status}), without resourceVersion: only the
     * leader writes an operation's status, so there is no other writer to conflict with. Not a merge patch: that
     * leaves on the server every field this status no longer has, so a field cleared here (a request time whose
     * request never arrived) would come back with the next read and the step that cleared it would run forever.
     */
    static StatusStore on(KubernetesClient client) {
        return resource -> {
            CustomResource<?, ?> target = emptyLike(resource);
            target.setMetadata(new ObjectMetaBuilder().withName(resource.getMetadata().getName()).build());
            String status = client.getKubernetesSerialization().asJson(resource.getStatus());
            HasMetadata patched = client.resource(target).subresource("status")
                    .patch(PatchContext.of(PatchType.JSON), "[{\"op\":\"add\",\"path\":\"/status\",\"value\":" + status + "}]");
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
}
