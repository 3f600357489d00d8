package dev.cks.nodeops.operation;

import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The status, applied with server-side apply, forced, as the controller's field manager: the very write JOSDK
 * makes of the status a reconcile returns (useSSAToPatchPrimaryResource, the default). So an operation's status
 * has one writer, whose fields are those of its last write, whichever of the two made it: a field that write
 * leaves out is removed (a request time whose request never arrived, the node no longer worked on). With two
 * managers a field stays while the other still claims it (docs/architecture.md).
 *
 * <p>Conditional on the resourceVersion the reconcile read (or this store last wrote), as JOSDK's own apply of the
 * status is: a status someone wrote since — a newer leader while this one was frozen, or a version this reconcile's
 * stale cache never showed it — is never overwritten. The API server answers 409 Conflict instead, the step fails
 * before its side effect, and the reconcile is run again from what the API server holds now: re-read, re-decided
 * ({@link OperationRecorder#retrying}). The resourceVersion comes back with each write, so the reconcile's own
 * writes chain, and JOSDK's apply at its end is conditional on the last of them.
 */
final class AppliedStatusStore implements StatusStore {
    private static final String STATUS = "status";

    private final KubernetesClient client;
    private volatile String fieldManager;

    AppliedStatusStore(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public void writeAs(String fieldManager) {
        this.fieldManager = fieldManager;
    }

    @Override
    public void persist(CustomResource<?, ?> resource) {
        String manager = fieldManager;
        if (manager == null) {
            throw new IllegalStateException("The status of " + resource.getKind() + " " + resource.getMetadata().getName()
                    + " is written before its controller told its field manager (prepareEventSources).");
        }
        takeOver(resource, manager);
        CustomResource<?, ?> target = named(resource);
        withStatus(target, resource.getStatus());
        CustomResource<?, ?> applied = client.resource(target).subresource(STATUS).patch(new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(manager).withForce(true).build());
        resource.getMetadata().setResourceVersion(applied.getMetadata().getResourceVersion());
        resource.getMetadata().setManagedFields(applied.getMetadata().getManagedFields());
    }

    /**
     * A JSON patch, not an apply: server-side apply types the stored object against the CRD first and fails on a field whose
     * type changed. Replaced whole, so no field of the older status outlives it; conditional on the version read, as every
     * write here. The API server drops the object's managedFields on such a write (it cannot type the old object either);
     * the next apply claims the status again.
     */
    @Override
    public void replace(CustomResource<?, ?> resource) {
        CustomResource<?, ?> replaced = client.resource(named(resource)).subresource(STATUS).patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + resource.getMetadata().getResourceVersion() + "\"},"
                        + "{\"op\":\"replace\",\"path\":\"/status\",\"value\":" + client.getKubernetesSerialization().asJson(resource.getStatus()) + "}]");
        resource.getMetadata().setResourceVersion(replaced.getMetadata().getResourceVersion());
        resource.getMetadata().setManagedFields(replaced.getMetadata().getManagedFields());
        persist(resource);
    }

    /**
     * A status an operator before this writer wrote has a second manager (Fabric8's default, from the JSON patch it
     * wrote with), which keeps every field it set however often this one leaves it out. Its entry goes from
     * managedFields once, before the first apply: a subresource cannot change managedFields, so on the resource
     * itself, and only if it is still the version this reconcile read (else the patch fails and the step is retried).
     * The apply after it claims every field of the status the reconcile holds.
     */
    private void takeOver(CustomResource<?, ?> resource, String manager) {
        Optional<List<ManagedFieldsEntry>> kept = withoutOtherStatusWriters(resource.getMetadata().getManagedFields(), manager);
        if (kept.isEmpty()) {
            return;
        }
        CustomResource<?, ?> patched = client.resource(named(resource)).patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + resource.getMetadata().getResourceVersion() + "\"},"
                        + "{\"op\":\"replace\",\"path\":\"/metadata/managedFields\",\"value\":" + client.getKubernetesSerialization().asJson(kept.get()) + "}]");
        resource.getMetadata().setResourceVersion(patched.getMetadata().getResourceVersion());
    }

    /** The managedFields without the entries of other managers of the status subresource; empty when there are none. */
    static Optional<List<ManagedFieldsEntry>> withoutOtherStatusWriters(List<ManagedFieldsEntry> entries, String manager) {
        if (entries == null || entries.stream().noneMatch(entry -> isOtherStatusWriter(entry, manager))) {
            return Optional.empty();
        }
        return Optional.of(entries.stream().filter(entry -> !isOtherStatusWriter(entry, manager)).toList());
    }

    private static boolean isOtherStatusWriter(ManagedFieldsEntry entry, String manager) {
        return STATUS.equals(entry.getSubresource()) && !manager.equals(entry.getManager());
    }

    @SuppressWarnings("unchecked")
    private static void withStatus(CustomResource<?, ?> target, Object status) {
        ((CustomResource<?, Object>) target).setStatus(status);
    }

    /** The resource's kind, name and the version the write is conditional on: what is written is only what the patch says. */
    private static CustomResource<?, ?> named(CustomResource<?, ?> resource) {
        CustomResource<?, ?> target;
        try {
            target = resource.getClass().getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(resource.getClass() + " has no public no-argument constructor", e);
        }
        target.setMetadata(new ObjectMetaBuilder().withName(resource.getMetadata().getName())
                .withNamespace(resource.getMetadata().getNamespace()).withResourceVersion(resource.getMetadata().getResourceVersion()).build());
        return target;
    }
}
