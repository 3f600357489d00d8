package dev.cks.nodeops.testing;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.operation.StatusStore;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.Serialization;

/** Keeps every status written before a step, as JSON, so a test can start a new reconciler from the last one (a restart). */
public final class RecordingStatusStore implements StatusStore {
    public final List<String> persisted = new ArrayList<>();

    @Override
    public void persist(CustomResource<?, ?> resource) {
        persisted.add(Serialization.asJson(resource.getStatus()));
    }

    public String last() {
        return persisted.isEmpty() ? null : persisted.get(persisted.size() - 1);
    }
}
