package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * status.targetNodes became a list (#35). Bed: the real API server, no operator process. Actor: a person upgrading the
 * operator in place, CRDs first (README, "Upgrade"), while a ScaleDown whose status the older operator applied (the names as
 * one comma-separated string, under the older CRD, as the same field manager) is under way. The new operator reads each name from
 * the stored text. Server-side apply cannot write over that text (the API server answers 500 "failed to create typed live
 * object"), so the status is replaced once with a JSON patch; then applied as always. The bed's CRDs are
 * shared, so the current one is applied again at the end.
 */
@ExtendWith(TestBedExtension.class)
class TargetNodesUpgradeIT {
    private static final Path CRD = Path.of("deploy/crds/scaledowns.nodeops.cks.dev-v1.yml");
    private static final String NAME = "sd-written-by-0-2";
    private static final String FIELD_MANAGER = "scaledown";

    @Test
    void aStatusTheOlderOperatorWroteIsReadAsItsNodesAndRewrittenAsAList(TestBed bed) throws IOException {
        KubernetesClient client = bed.client();
        CustomResourceDefinition current = client.getKubernetesSerialization().unmarshal(Files.readString(CRD), CustomResourceDefinition.class);
        try {
            CustomResourceDefinition older = client.getKubernetesSerialization().clone(current);
            JSONSchemaProps text = new JSONSchemaProps();
            text.setType("string");
            text.setDescription("The nodes picked for removal, comma-separated, for `kubectl get`.");
            older.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema().getProperties().get("status").getProperties().put("targetNodes", text);
            applyAndAwaitEstablished(client, older);
            io.fabric8.kubernetes.api.model.HasMetadata made = client.resource("apiVersion: nodeops.cks.dev/v1alpha1\nkind: ScaleDown\nmetadata: {name: " + NAME + "}\n"
                    + "spec: {nodeNames: [w1, w2]}\n").create();
            // The API server takes up a CRD's new schema a moment after it is established.
            Awaitility.await("the older schema in force").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "ScaleDown").withName(NAME).subresource("status")
                            .patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(FIELD_MANAGER).withForce(true)
                                    .build(), "{\"apiVersion\":\"nodeops.cks.dev/v1alpha1\",\"kind\":\"ScaleDown\",\"metadata\":{\"name\":\"" + NAME
                                            + "\"},\"status\":{\"phase\":\"Draining\",\"targetNodes\":\"w1,w2\"}}") != null);
            assertThat(status(client)).as("stored as the older operator wrote it").containsEntry("targetNodes", "w1,w2");

            applyAndAwaitEstablished(client, current);
            ScaleDown read = client.resources(ScaleDown.class).withName(NAME).get();

            assertThat(read.getStatus().getTargetNodes()).containsExactly("w1", "w2");
            assertThat(read.getStatus().writtenByAnOlderOperator()).isTrue();
            StatusStore store = StatusStore.on(client);
            store.writeAs(FIELD_MANAGER);
            read.getStatus().setMessage("Draining w1.");
            Awaitility.await("the operator's status write").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .untilAsserted(() -> store.replace(read));
            assertThat(status(client)).containsEntry("targetNodes", List.of("w1", "w2")).containsEntry("message", "Draining w1.");
            read.getStatus().setMessage("Draining w2.");
            store.persist(read);
            assertThat(status(client)).as("applied as every status write is, from now on").containsEntry("message", "Draining w2.")
                    .containsEntry("targetNodes", List.of("w1", "w2"));
            client.resource(made).delete();
        } finally {
            client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "ScaleDown").withName(NAME).delete();
            applyAndAwaitEstablished(client, current);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> status(KubernetesClient client) {
        return (Map<String, Object>) client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "ScaleDown").withName(NAME).get()
                .getAdditionalProperties().get("status");
    }

    /** Applied as the bed applies CRDs (server-side, forced), then until it is established. */
    private static void applyAndAwaitEstablished(KubernetesClient client, CustomResourceDefinition crd) {
        crd.setMetadata(new ObjectMetaBuilder().withName(crd.getMetadata().getName()).build());
        client.resource(crd).forceConflicts().serverSideApply();
        Awaitility.await("CRD " + crd.getMetadata().getName() + " served").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    CustomResourceDefinition live = client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).get();
                    return live.getStatus() != null && live.getStatus().getConditions().stream()
                            .anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
                });
    }
}
