package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** The real API server enforces the CRDs' schema: bad input is refused with a message that says why. */
@ExtendWith(TestBedExtension.class)
class CrdValidationIT {
    private final KubernetesClient client;
    private final TestBed bed;

    CrdValidationIT(TestBed bed) {
        this.bed = bed;
        this.client = bed.client();
    }

    @Test
    void kubectlGetNodeopsListsEveryKind() throws IOException {
        GenericKubernetesResource audit = client.getKubernetesSerialization()
                .unmarshal(Files.readString(Path.of("config/samples/vmmapaudit.yaml")), GenericKubernetesResource.class);
        audit.getMetadata().setName("category-" + audit.getMetadata().getName());
        GenericKubernetesResource created = client.resource(audit).create();
        try {
            assertThat(bed.tool("kubectl", "get", "nodeops", "-o", "name")).contains("vmmapaudit.nodeops.cks.dev/category-");
        } finally {
            client.resource(created).delete();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nodeupgrade.yaml", "scaledown.yaml", "vmmapaudit.yaml"})
    void samplesAreAccepted(String sample) throws IOException {
        GenericKubernetesResource resource = client.getKubernetesSerialization()
                .unmarshal(Files.readString(Path.of("config/samples", sample)), GenericKubernetesResource.class);
        resource.getMetadata().setName("valid-" + resource.getMetadata().getName());
        GenericKubernetesResource created = client.resource(resource).create();
        try {
            assertThat(created.getMetadata().getUid()).isNotBlank();
        } finally {
            client.resource(created).delete();
        }
    }

    static Stream<Arguments> invalidResources() {
        return Stream.of(
                Arguments.of("NodeUpgrade", "targetVersion: '1.33'\n  executor: {type: CloudStackIso}",
                        "spec.targetVersion in body should match"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4", "spec.executor: Required value"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Ansible}",
                        "spec.executor.type: Unsupported value: \"Ansible\""),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script}",
                        "executor.type Script needs executor.script.configMapRef"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso, image: 'attacker.example/root:latest'}",
                        "executor.image is not accepted: the upgrade Job's image is the operator's configuration"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  drain: {retries: -1}",
                        "spec.drain.retries: Invalid value: -1: spec.drain.retries in body should be greater than or equal to 0"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  count: 1", "set exactly one of nodeNames and count"),
                Arguments.of("ScaleDown", "removal: CloudStackScale", "set exactly one of nodeNames and count"),
                Arguments.of("ScaleDown", "count: 0", "spec.count in body should be greater than or equal to 1"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  removal: Delete", "spec.removal: Unsupported value: \"Delete\""),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  selectionPolicy: FewestPods", "selectionPolicy applies only with count"),
                Arguments.of("VMMapAudit", "intervalSeconds: 5", "spec.intervalSeconds in body should be greater than or equal to 30"),
                Arguments.of("VMMapAudit", "maxEventsPerRun: 0", "spec.maxEventsPerRun in body should be greater than or equal to 1"),
                Arguments.of("VMMapAudit", "suspend: sometimes", "spec.suspend: Invalid value: \"string\": spec.suspend in body must be of type boolean"),
                // node names: a set of DNS subdomains, as Node names are
                Arguments.of("ScaleDown", "nodeNames: [w1, w2, w1]", "spec.nodeNames[2]: Duplicate value: \"w1\""),
                Arguments.of("ScaleDown", "nodeNames: [Worker_1]", "nodeNames must be Node names"),
                Arguments.of("ScaleDown", "nodeNames: ['w1.']", "nodeNames must be Node names"),
                Arguments.of("ScaleDown", "nodeNames: [" + "a".repeat(254) + "]", "spec.nodeNames[0]: Too long: may not be more than 253"),
                Arguments.of("ScaleDown", "nodeNames: []", "spec.nodeNames: Invalid value: 0: spec.nodeNames in body should have at least 1 items"),
                // out-of-range numbers
                Arguments.of("ScaleDown", "count: 101", "spec.count in body should be less than or equal to 100"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  timeoutSeconds: 0", "spec.timeoutSeconds in body should be greater than or equal to 1"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  timeoutSeconds: 700000", "spec.timeoutSeconds in body should be less than or equal to 604800"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {gracePeriodSeconds: -2}", "spec.drain.gracePeriodSeconds in body should be greater than or equal to -1"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {timeoutSeconds: -5}", "spec.drain.timeoutSeconds in body should be greater than or equal to 0"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {retries: 101}", "spec.drain.retries in body should be less than or equal to 100"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  preflight: Maybe", "spec.preflight: Unsupported value: \"Maybe\""),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso, jobTimeoutSeconds: 0}",
                        "spec.executor.jobTimeoutSeconds in body should be greater than or equal to 1"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  readyTimeoutSeconds: 0\n  executor: {type: CloudStackIso}",
                        "spec.readyTimeoutSeconds in body should be greater than or equal to 1"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  timeoutSeconds: 700000\n  executor: {type: CloudStackIso}",
                        "spec.timeoutSeconds in body should be less than or equal to 604800"),
                Arguments.of("VMMapAudit", "intervalSeconds: 100000", "spec.intervalSeconds in body should be less than or equal to 86400"),
                Arguments.of("VMMapAudit", "gracePeriodSeconds: -1", "spec.gracePeriodSeconds in body should be greater than or equal to 0"),
                Arguments.of("VMMapAudit", "maxEventsPerRun: 101", "spec.maxEventsPerRun in body should be less than or equal to 100"),
                // bad selectors and references
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  nodeSelector: {'bad key!': x}\n  executor: {type: CloudStackIso}",
                        "nodeSelector keys must be label keys"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  nodeSelector: {pool: 'two words'}\n  executor: {type: CloudStackIso}",
                        "nodeSelector values must be label values"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  nodeSelector: {pool: " + "v".repeat(64) + "}\n  executor: {type: CloudStackIso}",
                        "spec.nodeSelector.pool: Too long: may not be more than 63"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  nodeSelector: {" + "k".repeat(64) + ": x}\n  executor: {type: CloudStackIso}",
                        "nodeSelector keys must be label keys"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, script: {configMapRef: {name: Upgrade_Scripts, key: up.sh}}}",
                        "configMapRef.name must be a ConfigMap name"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, script: {configMapRef: {name: upgrade, key: ../up.sh}}}",
                        "configMapRef.key must be a ConfigMap key"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, cloudStackIso: {}, script: {configMapRef: {name: u, key: k}}}",
                        "executor.cloudStackIso applies only with type CloudStackIso"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso, cloudStackIso: {kubernetesVersionId: latest}}",
                        "kubernetesVersionId must be a CloudStack id (a UUID)"),
                Arguments.of("VMMapAudit", "clusterId: prod-cluster", "clusterId must be a CloudStack id (a UUID)"));
    }

    /** Names end up in node annotations, Job labels and event names: at most 63 characters. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ScaleDown", "NodeUpgrade"})
    void aNameTooLongForALabelIsRefused(String kind) {
        String spec = kind.equals("ScaleDown") ? "nodeNames: [a]" : "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}";
        String name = "n".repeat(64);
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n  " + spec + "\n";
        assertThatThrownBy(() -> client.resource(yaml).create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("metadata.name may have at most 63 characters");
        assertThat(client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", kind).withName(name).get()).isNull();
    }

    @Test
    void theSpecOfANodeUpgradeIsImmutableToo() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata:\n  name: immutable-nu\nspec:\n  targetVersion: v1.33.4\n"
                + "  executor: {type: CloudStackIso}\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            @SuppressWarnings("unchecked")
            java.util.Map<String, Object> spec = (java.util.Map<String, Object>) created.getAdditionalProperties().get("spec");
            spec.put("targetVersion", "v1.34.0");
            assertThatThrownBy(() -> client.resource(created).update())
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec is immutable: create a new NodeUpgrade");
        } finally {
            client.resource(created).delete();
        }
    }

    @ParameterizedTest(name = "{0} with {1}")
    @MethodSource("invalidResources")
    void invalidInputIsRejectedWithTheSchemasMessage(String kind, String spec, String expectedMessage) {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: invalid-" + kind.toLowerCase()
                + "\nspec:\n  " + spec + "\n";
        assertThatThrownBy(() -> client.resource(yaml).create())
                .isInstanceOf(KubernetesClientException.class)
                .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
                .hasMessageContaining(expectedMessage);
        assertThat(client.genericKubernetesResources("nodeops.cks.dev/v1alpha1", kind).withName("invalid-" + kind.toLowerCase()).get())
                .as("nothing was created").isNull();
    }

    @Test
    void specsOfRunningOperationsAreImmutable() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: ScaleDown\nmetadata:\n  name: immutable-sd\nspec:\n  nodeNames: [a]\n";
        GenericKubernetesResource created = client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
        created = client.resource(created).create();
        try {
            GenericKubernetesResource changed = created;
            changed.setAdditionalProperty("spec", java.util.Map.of("nodeNames", java.util.List.of("b")));
            assertThatThrownBy(() -> client.resource(changed).update())
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec is immutable: create a new ScaleDown");
        } finally {
            client.resource(created).delete();
        }
    }
}
