package dev.cks.nodeops.operation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownReconciler;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;

/**
 * The status a reconcile writes before a side effect ({@link StatusStore}) and the one JOSDK writes at its end
 * are one writer's on the real API server: whichever wrote last, a field it leaves out is gone. No operator
 * runs here; the end-of-reconcile write is made as JOSDK 5.3 makes it (ResourceOperations#serverSideApplyPrimaryStatus:
 * server-side apply of the status subresource, forced, as the controller's field manager, with the resourceVersion
 * the reconcile holds and no managedFields).
 */
@ExtendWith(TestBedExtension.class)
class StatusStoreIT {
    /** JOSDK's default field manager is the controller's name. */
    private static final String MANAGER = ScaleDownReconciler.class.getAnnotation(ControllerConfiguration.class).name();
    private static final AtomicInteger NAMES = new AtomicInteger();

    private final KubernetesClient client;
    private final StatusStore store;
    private ScaleDown resource;

    StatusStoreIT(KubernetesClient client) {
        this.client = client;
        this.store = StatusStore.on(client);
        store.writeAs(MANAGER);
    }

    @BeforeEach
    void create() {
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(List.of("status-store-it-node"));
        spec.setRemoval(ScaleDownSpec.Removal.CloudStackScale);
        spec.setTimeoutSeconds(600);
        ScaleDown created = new ScaleDown();
        created.setMetadata(new ObjectMetaBuilder().withName("status-store-it-" + NAMES.incrementAndGet() + "-" + Long.toHexString(System.nanoTime() & 0xfffff))
                .build());
        created.setSpec(spec);
        resource = client.resource(created).create();
        resource.setStatus(new ScaleDownStatus());
    }

    @AfterEach
    void delete() {
        client.resource(resource).withTimeoutInMillis(0).delete();
    }

    @Test
    void aFieldTheStoreWroteIsGoneWhenTheEndOfTheReconcileLeavesItOut() {
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Draining);
        resource.getStatus().setCurrentNode("w1");
        store.persist(resource);

        resource.getStatus().setPhase(ScaleDownStatus.Phase.RolledBack);
        resource.getStatus().setCurrentNode(null);
        endOfReconcile();

        ScaleDownStatus onServer = read().getStatus();
        assertThat(onServer.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(onServer.getCurrentNode()).as("cleared by the end-of-reconcile write").isNull();
    }

    @Test
    void aFieldTheEndOfAReconcileWroteIsGoneWhenTheStoreLeavesItOut() {
        ScaleDownStatus.RemovalStatus removal = new ScaleDownStatus.RemovalStatus();
        removal.setStartedAt("2026-12-01T09:00:00Z");
        removal.setRequestedAt("2026-12-01T09:00:01Z");
        resource.getStatus().setRemoval(removal);
        resource.getStatus().setHeldSince("2026-12-01T08:00:00Z");
        endOfReconcile();

        removal.setRequestedAt(null);
        resource.getStatus().setHeldSince(null);
        store.persist(resource);

        ScaleDownStatus onServer = read().getStatus();
        assertThat(onServer.getRemoval().getStartedAt()).isEqualTo("2026-12-01T09:00:00Z");
        assertThat(onServer.getRemoval().getRequestedAt()).as("a cleared request time").isNull();
        assertThat(onServer.getHeldSince()).isNull();
    }

    @Test
    void aFieldTheStoreWroteIsGoneWhenItsNextWriteLeavesItOut() {
        resource.getStatus().setCurrentNode("w1");
        store.persist(resource);
        resource.getStatus().setCurrentNode(null);
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Removing);
        store.persist(resource);

        assertThat(read().getStatus().getCurrentNode()).isNull();
        assertThat(read().getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Removing);
    }

    @Test
    void theStatusHasOneFieldManager() {
        resource.getStatus().setCurrentNode("w1");
        store.persist(resource);
        endOfReconcile();
        store.persist(resource);

        assertThat(statusManagers(read())).containsExactly(MANAGER);
    }

    /**
     * The other actor: a newer leader (another replica) that wrote the status after this reconcile read it. The write
     * from the older read is refused (409 Conflict), and the newer status, its recorded job included, stays whole.
     */
    @Test
    void aWriteFromAnOlderReadIsRefusedAndTheNewerStatusStays() {
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Removing);
        store.persist(resource);
        ScaleDown newer = read();
        ScaleDownStatus.RemovalStatus removal = new ScaleDownStatus.RemovalStatus();
        removal.setJobId("job-of-the-new-leader");
        newer.getStatus().setRemoval(removal);
        StatusStore newLeader = StatusStore.on(client);
        newLeader.writeAs(MANAGER);
        newLeader.persist(newer);

        resource.getStatus().setPhase(ScaleDownStatus.Phase.Draining);
        assertThatThrownBy(() -> store.persist(resource)).isInstanceOfSatisfying(KubernetesClientException.class,
                conflict -> assertThat(conflict.getCode()).isEqualTo(409));

        assertThat(read().getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Removing);
        assertThat(read().getStatus().getRemoval().getJobId()).isEqualTo("job-of-the-new-leader");
    }

    /** Each write returns the version it made: the reconcile's next write, and JOSDK's at its end, follow on from it. */
    @Test
    void aReconcilesOwnWritesFollowOnFromEachOther() {
        resource.getStatus().setCurrentNode("w1");
        store.persist(resource);
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Draining);
        store.persist(resource);
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Removing);
        endOfReconcile();

        assertThat(read().getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Removing);
    }

    /**
     * A ScaleDown an operator before this writer left half-way: its status written before a side effect by a JSON
     * patch as Fabric8's default manager, then at the end of the reconcile by JOSDK's apply.
     */
    @Test
    void aStatusAnOlderOperatorWroteIsTakenOverByTheFirstWrite() {
        resource.getStatus().setPhase(ScaleDownStatus.Phase.Draining);
        resource.getStatus().setCurrentNode("w1");
        ScaleDown target = new ScaleDown();
        target.setMetadata(new ObjectMetaBuilder().withName(resource.getMetadata().getName()).build());
        client.resource(target).subresource("status").patch(PatchContext.of(PatchType.JSON),
                "[{\"op\":\"add\",\"path\":\"/status\",\"value\":" + client.getKubernetesSerialization().asJson(resource.getStatus()) + "}]");
        resource = read();
        endOfReconcile();
        assertThat(statusManagers(read())).as("the older operator's two writers").hasSize(2);
        resource = read();

        store.persist(resource);
        resource.getStatus().setPhase(ScaleDownStatus.Phase.RolledBack);
        resource.getStatus().setCurrentNode(null);
        endOfReconcile();

        assertThat(read().getStatus().getCurrentNode()).isNull();
        assertThat(statusManagers(read())).containsExactly(MANAGER);
    }

    /** As JOSDK 5.3 patches the status a reconcile returns (UpdateControl.patchStatus with server-side apply). */
    private void endOfReconcile() {
        List<ManagedFieldsEntry> managedFields = resource.getMetadata().getManagedFields();
        resource.getMetadata().setManagedFields(null);
        try {
            ScaleDown applied = client.resource(resource).subresource("status").patch(new PatchContext.Builder().withForce(true)
                    .withFieldManager(MANAGER).withPatchType(PatchType.SERVER_SIDE_APPLY).build());
            resource.getMetadata().setResourceVersion(applied.getMetadata().getResourceVersion());
        } finally {
            resource.getMetadata().setManagedFields(managedFields);
        }
    }

    private ScaleDown read() {
        return client.resources(ScaleDown.class).withName(resource.getMetadata().getName()).get();
    }

    private static List<String> statusManagers(ScaleDown onServer) {
        return onServer.getMetadata().getManagedFields().stream().filter(entry -> "status".equals(entry.getSubresource()))
                .map(ManagedFieldsEntry::getManager).distinct().toList();
    }
}
