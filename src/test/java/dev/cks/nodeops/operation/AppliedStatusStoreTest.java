package dev.cks.nodeops.operation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.scaledown.ScaleDown;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

/** What the store decides without the API server; its writes are proven on the real one (StatusStoreIT). */
class AppliedStatusStoreTest {
    private static final String MANAGER = "scaledown";

    @Test
    void aWriteBeforeTheControllerToldItsFieldManagerFailsNamingTheResource() {
        ScaleDown resource = new ScaleDown();
        resource.setMetadata(new ObjectMetaBuilder().withName("sd-early").build());

        // No client: the write must fail before any request.
        assertThatThrownBy(() -> new AppliedStatusStore(null).persist(resource)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ScaleDown sd-early").hasMessageContaining("field manager");
    }

    @Test
    void onlyOtherManagersOfTheStatusAreTakenOut() {
        ManagedFieldsEntry created = entry("kubectl-create", "Update", null);
        ManagedFieldsEntry finalizer = entry(MANAGER, "Apply", null);
        ManagedFieldsEntry ours = entry(MANAGER, "Apply", "status");
        ManagedFieldsEntry olderOperator = entry("fabric8-kubernetes-client", "Update", "status");

        assertThat(AppliedStatusStore.withoutOtherStatusWriters(List.of(created, finalizer, ours, olderOperator), MANAGER))
                .contains(List.of(created, finalizer, ours));
    }

    @Test
    void aStatusWithOneManagerIsLeftAsItIs() {
        assertThat(AppliedStatusStore.withoutOtherStatusWriters(List.of(entry("kubectl-create", "Update", null), entry(MANAGER, "Apply", "status")),
                MANAGER)).isEmpty();
        assertThat(AppliedStatusStore.withoutOtherStatusWriters(null, MANAGER)).as("a resource read without managedFields").isEmpty();
    }

    private static ManagedFieldsEntry entry(String manager, String operation, String subresource) {
        return new ManagedFieldsEntryBuilder().withManager(manager).withOperation(operation).withSubresource(subresource)
                .withApiVersion("nodeops.cks.dev/v1alpha1").withFieldsType("FieldsV1").build();
    }
}
