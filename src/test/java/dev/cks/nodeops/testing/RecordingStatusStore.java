package dev.cks.nodeops.testing;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.operation.StatusStore;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * Keeps every status written before a step, as JSON, so a test can start a new reconciler from the last
 * one (a restart); and the status the API server holds, which a restart really finds: the last one
 * persisted or patched at the end of a reconcile.
 */
public final class RecordingStatusStore implements StatusStore {
    public final List<String> persisted = new ArrayList<>();
    /** How often a status was replaced whole (an older operator's, which the API server cannot apply over). */
    public int replaced;
    private String durable;

    @Override
    public void replace(CustomResource<?, ?> resource) {
        replaced++;
        persist(resource);
    }

    @Override
    public void persist(CustomResource<?, ?> resource) {
        persisted.add(Serialization.asJson(resource.getStatus()));
        durable = persisted.get(persisted.size() - 1);
    }

    /** JOSDK patched the status at the end of a reconcile. */
    public void patched(CustomResource<?, ?> resource) {
        durable = Serialization.asJson(resource.getStatus());
    }

    public String last() {
        return persisted.isEmpty() ? null : persisted.get(persisted.size() - 1);
    }

    /** The status as the API server holds it, null before anything was written. */
    public <S> S durable(Class<S> type) {
        return durable == null ? null : Serialization.unmarshal(durable, type);
    }
}
