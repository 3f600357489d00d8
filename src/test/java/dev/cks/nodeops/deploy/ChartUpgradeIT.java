package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The upgrade and uninstall paths the README documents, on the real API server: from the previous
 * chart release (0.1.0, kept under src/test/resources/charts) with its CRDs, CRDs first with
 * `kubectl apply --server-side`, then `helm upgrade --reset-then-reuse-values`; a CR made before keeps
 * working and the new fields and rules work. Uninstalling leaves CRDs and CRs; a CR whose finalizer no
 * operator removes any more stays Terminating until the documented patch removes it. The bed's CRDs are
 * shared, so the current ones are applied again at the end. Owners run Helm 4 or still Helm 3 (Helm 4
 * applies server-side and waits with its own watcher): the whole path runs with each ({@code helm} is
 * the bed's Helm 4, {@code helm3} its Helm 3).
 */
@ExtendWith(TestBedExtension.class)
class ChartUpgradeIT {
    private static final String PREVIOUS = "src/test/resources/charts/cks-node-operator-0.1.0";
    private static final String CHART = "deploy/helm/cks-node-operator";
    private static final String RELEASE = "upg";

    @ParameterizedTest
    @ValueSource(strings = {"helm", "helm3"})
    void upgradingFromThePreviousChartCrdsFirstThenUninstalling(String helm, TestBed bed) {
        // A namespace of its own per Helm: the one before may still be terminating.
        String namespace = "cks-upgrade-it-" + helm;
        KubernetesClient client = bed.client();
        bed.runTool(helm, "uninstall", RELEASE, "-n", namespace, "--wait");
        try {
            bed.tool("kubectl", "apply", "--server-side", "--force-conflicts", "-f", PREVIOUS + "/crds/");
            if (helm.equals("helm")) {
                // What the README warns of: Helm 4 applies crds/ server-side, and kubectl owns the CRDs' fields now.
                TestBed.ToolResult refused = bed.runTool(helm, "install", RELEASE, PREVIOUS, "-n", namespace, "--create-namespace");
                assertThat(refused.exitCode()).as(refused.output()).isNotZero();
                assertThat(refused.output()).contains("conflict occurred while applying object");
                bed.runTool(helm, "uninstall", RELEASE, "-n", namespace, "--wait");
            }
            bed.tool(helm, "install", RELEASE, PREVIOUS, "-n", namespace, "--create-namespace", "--skip-crds", "--set", "replicaCount=1",
                    "--set", "cloudstack.secretName=cloudstack-upgrade-it");
            GenericKubernetesResource audit = client.resource(vmMapAudit("made-before-upgrade")).create();
            assertThat(statusAfterPatch(client, "made-before-upgrade")).as("the previous CRD prunes the new status field")
                    .doesNotContainKey("findingCounts");

            bed.tool("kubectl", "apply", "--server-side", "--force-conflicts", "-f", CHART + "/crds/");
            waitEstablished(client);
            String upgraded = bed.tool(helm, "upgrade", RELEASE, CHART, "-n", namespace, "--reset-then-reuse-values", "--wait", "--timeout", "2m");
            assertThat(upgraded).contains("has been upgraded");

            assertThat(client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "VMMapAudit").withName("made-before-upgrade").get())
                    .as("a CR made before the upgrade is still there").isNotNull();
            assertThat(statusAfterPatch(client, "made-before-upgrade")).as("the new status field is kept").containsKey("findingCounts");
            assertThat(bed.tool("kubectl", "get", "nodeops", "-o", "name")).contains("vmmapaudit.nodeops.cks.dev/made-before-upgrade");
            assertThatThrownBy(() -> client.resource("apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata: {name: upgrade-it-image}\n"
                    + "spec: {targetVersion: v1.35.4, executor: {type: CloudStackIso, image: 'attacker.example/root:1'}}\n").create())
                    .as("the new CEL rule is in force").isInstanceOf(KubernetesClientException.class).hasMessageContaining("executor.image is not accepted");
            assertThat(bed.tool(helm, "get", "values", RELEASE, "-n", namespace)).as("the user's values survive").contains("replicaCount: 1");
            assertThat(client.serviceAccounts().inNamespace(namespace).withName(RELEASE + "-cks-node-operator").get()).isNotNull();

            // Uninstall: a CR with the operator's finalizer, and no operator left to remove it.
            client.resource("apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata:\n  name: upgrade-it-left\n  finalizers: ["
                    + "nodeupgrades.nodeops.cks.dev/finalizer]\nspec: {targetVersion: v1.35.4, executor: {type: CloudStackIso}}\n").create();
            bed.tool(helm, "uninstall", RELEASE, "-n", namespace, "--wait");
            assertThat(client.apps().deployments().inNamespace(namespace).list().getItems()).isEmpty();
            assertThat(client.rbac().clusterRoles().withLabel("app.kubernetes.io/instance", RELEASE).list().getItems()).isEmpty();
            assertThat(client.apiextensions().v1().customResourceDefinitions().withName("nodeupgrades.nodeops.cks.dev").get())
                    .as("helm never deletes the CRDs of crds/").isNotNull();
            client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "NodeUpgrade").withName("upgrade-it-left").delete();
            assertThat(client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "NodeUpgrade").withName("upgrade-it-left").get()
                    .getMetadata().getDeletionTimestamp()).as("Terminating until its finalizer goes").isNotNull();
            bed.tool("kubectl", "patch", "nu", "upgrade-it-left", "--type=merge", "-p", "{\"metadata\":{\"finalizers\":null}}");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() ->
                    client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "NodeUpgrade").withName("upgrade-it-left").get() == null);
            client.resource(audit).delete();
        } finally {
            bed.runTool(helm, "uninstall", RELEASE, "-n", namespace);
            bed.runTool("kubectl", "patch", "nu", "upgrade-it-left", "--type=merge", "-p", "{\"metadata\":{\"finalizers\":null}}");
            bed.runTool("kubectl", "delete", "vma", "made-before-upgrade", "--ignore-not-found");
            bed.runTool("kubectl", "delete", "namespace", namespace, "--ignore-not-found", "--wait=false");
            // The other tests need the current CRDs.
            bed.tool("kubectl", "apply", "--server-side", "--force-conflicts", "-f", "deploy/crds/");
            waitEstablished(client);
        }
    }

    private static GenericKubernetesResource vmMapAudit(String name) {
        GenericKubernetesResource audit = new GenericKubernetesResource();
        audit.setApiVersion("nodeops.cks.dev/v1alpha1");
        audit.setKind("VMMapAudit");
        audit.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).build());
        audit.setAdditionalProperty("spec", Map.of("suspend", true));
        return audit;
    }

    /** Writes findingCounts into the audit's status and returns what the API server stored. */
    private static Map<String, Object> statusAfterPatch(KubernetesClient client, String name) {
        var resource = client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", "VMMapAudit").withName(name);
        resource.subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"findingCounts\":{\"UnmappedVm\":1}}}");
        Map<String, Object> status = resource.get().get("status");
        return status == null ? Map.of() : status;
    }

    private static void waitEstablished(KubernetesClient client) {
        for (String crd : List.of("nodeupgrades", "scaledowns", "vmmapaudits", "drainreports")) {
            client.apiextensions().v1().customResourceDefinitions().withName(crd + ".nodeops.cks.dev").waitUntilCondition(c -> c.getStatus() != null
                    && c.getStatus().getConditions().stream().anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())),
                    60, java.util.concurrent.TimeUnit.SECONDS);
        }
    }
}
