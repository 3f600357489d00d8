package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
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

    /**
     * `kubectl explain` prints what each kind, its status and the status's fields are (#35): the descriptions the CRDs
     * carry, as the API server publishes them (a moment after the CRDs change, hence the wait). Lines are rewrapped
     * by kubectl, so whitespace is compared loosely.
     */
    @ParameterizedTest
    @MethodSource("explained")
    void kubectlExplainPrintsTheDescriptions(String field, String own, String ofAField) {
        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() ->
                assertThat(bed.tool("kubectl", "explain", field).replaceAll("\\s+", " ")).contains(own, ofAField));
    }

    static Stream<Arguments> explained() {
        return Stream.of(
                Arguments.of("nodeupgrade", "Upgrades the Kubernetes version of the selected CKS nodes",
                        "What the operator observed and did, written only by the operator"),
                Arguments.of("nodeupgrade.status.nodes", "Every node the upgrade selected, in the order they are upgraded",
                        "WaitingReady (until Ready at the target)"),
                Arguments.of("nodeupgrade.status.nodes.drain", "The node's drain: its attempt, what blocks it, what it evicted",
                        "The drain attempt under way or last made, counted from 1"),
                Arguments.of("nodeupgrade.spec.selector", "The nodes to upgrade (a NodeUpgrade) or report on (a DrainReport), as a Kubernetes label selector",
                        "Label requirements a selected object must all meet"),
                Arguments.of("scaledown.spec.drain.selector", "The pods to drain, as a Kubernetes label selector",
                        "Label requirements a selected object must all meet"),
                Arguments.of("scaledown.status", "the removal or rollback, and conditions that say why",
                        "The names of the nodes picked for removal"),
                Arguments.of("vmmapaudit.status", "What the last runs found, written only by the operator",
                        "Keys of the findings already reported by an event"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"nodeupgrade.yaml", "scaledown.yaml", "vmmapaudit.yaml", "drainreport.yaml", "nodeupgrade-maintenance.yaml", "scaledown-maintenance.yaml"})
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

    /** The pod drain policy sample is plain Kubernetes: the API server accepts every document of it (a server-side dry run). */
    @Test
    void thePodDrainPolicySampleIsValidKubernetes() throws IOException {
        String namespace = bed.newNamespace("samples");
        try {
            for (String document : Files.readString(Path.of("config/samples/pod-drain-policy.yaml")).split("(?m)^---$")) {
                GenericKubernetesResource resource = client.getKubernetesSerialization().unmarshal(document, GenericKubernetesResource.class);
                resource.getMetadata().setNamespace(namespace);
                assertThat(client.resource(resource).dryRun().create().getMetadata().getName()).isEqualTo(resource.getMetadata().getName());
            }
        } finally {
            client.namespaces().withName(namespace).delete();
        }
    }

    /**
     * Bed: the API server alone, no operator. Actor: a Java client (the operator's tests, a GitOps tool's defaults) that
     * sends the deprecated spec.drain.podSelector as "" beside spec.drain.selector: an empty one selects what no selector
     * does, so it is no second selector.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"ScaleDown", "DrainReport"})
    void aDrainSelectorBesideAnEmptyPodSelectorIsAccepted(String kind) {
        String spec = (kind.equals("ScaleDown") ? "nodeNames: [a]\n  " : "")
                + "drain: {podSelector: '', selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: NotIn, values: [cache]}]}}";
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: drain-selector\nspec:\n  " + spec + "\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            assertThat(created.getMetadata().getUid()).isNotBlank();
        } finally {
            client.resource(created).delete();
        }
    }

    /**
     * What Kubernetes' own validation of a metav1.LabelSelector refuses, refused in every field that holds one: the nodes of a
     * NodeUpgrade and a DrainReport (spec.selector), the pods of each kind's drain (spec.drain.selector). The path in a
     * message is {@code <field>}.
     */
    static Stream<Arguments> malformedSelectors() {
        Map<String, String> selectors = new LinkedHashMap<>();
        selectors.put("{matchExpressions: [{key: pool, operator: In}]}", "In and NotIn need values, Exists and DoesNotExist take none");
        selectors.put("{matchExpressions: [{key: pool, operator: NotIn, values: []}]}", "In and NotIn need values, Exists and DoesNotExist take none");
        selectors.put("{matchExpressions: [{key: node-role.kubernetes.io/control-plane, operator: DoesNotExist, values: ['']}]}",
                "In and NotIn need values, Exists and DoesNotExist take none");
        selectors.put("{matchExpressions: [{key: pool, operator: Equals, values: [a]}]}", "the operator is In, NotIn, Exists or DoesNotExist");
        selectors.put("{matchExpressions: [{key: pool}]}", "<field>.matchExpressions[0].operator: Required value");
        selectors.put("{matchExpressions: [{key: 'bad key!', operator: Exists}]}", "selector.matchExpressions keys must be label keys");
        selectors.put("{matchExpressions: [{key: pool, operator: In, values: ['two words']}]}", "selector.matchExpressions keys must be label keys (an"
                + " optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.') and their values label values");
        selectors.put("{matchExpressions: [{key: pool, operator: In, values: [" + "v".repeat(64) + "]}]}",
                tooLong("<field>.matchExpressions[0].values[0]", 63));
        selectors.put("{matchLabels: {'bad key!': a}}", "selector.matchLabels keys must be label keys");
        selectors.put("{matchLabels: {pool: 'two words'}}", "selector.matchLabels values must be label values");
        List<List<String>> fields = List.of(
                List.of("NodeUpgrade", "spec.selector", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  selector: %s"),
                List.of("DrainReport", "spec.selector", "selector: %s"),
                List.of("NodeUpgrade", "spec.drain.selector", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  drain: {selector: %s}"),
                List.of("ScaleDown", "spec.drain.selector", "nodeNames: [a]\n  drain: {selector: %s}"),
                List.of("DrainReport", "spec.drain.selector", "drain: {selector: %s}"));
        return fields.stream().flatMap(field -> selectors.entrySet().stream().map(selector -> Arguments.of(field.get(0),
                field.get(2).formatted(selector.getKey()), selector.getValue().replace("<field>", field.get(1)))));
    }

    /**
     * The API server's own words for a value over the schema's maxLength: "may not be longer than N" up to 1.31, "may not
     * be more than N" (then "bytes" or "characters") since 1.32.
     */
    private static String tooLong(String field, int maxLength) {
        return field + ": Too long: may not be " + (TestBed.kubernetesMinor() < 32 ? "longer than " : "more than ") + maxLength;
    }

    static Stream<Arguments> invalidResources() {
        return Stream.concat(malformedSelectors(), Stream.of(
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
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  maxUnavailable: 0",
                        "maxUnavailable is a count of at least 1 or a percentage from 1% to 100%"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  maxUnavailable: '150%'",
                        "maxUnavailable is a count of at least 1 or a percentage from 1% to 100%"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n  maxUnavailable: two",
                        "maxUnavailable is a count of at least 1 or a percentage from 1% to 100%"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  window: {days: [Sat], start: '01:00', end: '05:00', timeZone: Mars/Olympus_Mons}",
                        "window.timeZone must be an IANA time zone name"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  window: {days: [Sat], start: '01:00', end: '01:00'}", "window.start and window.end must differ"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  window: {days: [Saturday], start: '01:00', end: '05:00'}", "Unsupported value: \"Saturday\""),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  window: {days: [Sat], start: '1:00', end: '05:00'}", "spec.window.start in body should match"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  drain: {escalation: [{afterSeconds: 60, action: DeletePods}]}", "DeletePods deletes only the pods its selector matches"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  drain: {escalation: [{afterSeconds: 60, action: RollBack}]}", "RollBack is a ScaleDown's"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {escalation: [{afterSeconds: 60, action: Fail}]}", "Fail is a NodeUpgrade's"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {escalation: [{afterSeconds: 5, action: Warn}]}",
                        "spec.drain.escalation[0].afterSeconds in body should be greater than or equal to 10"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  count: 1", "set exactly one of nodeNames and count"),
                Arguments.of("ScaleDown", "removal: CloudStackScale", "set exactly one of nodeNames and count"),
                Arguments.of("ScaleDown", "count: 0", "spec.count in body should be greater than or equal to 1"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  removal: Delete", "spec.removal: Unsupported value: \"Delete\""),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  selectionPolicy: FewestPods", "selectionPolicy applies only with count"),
                Arguments.of("VMMapAudit", "intervalSeconds: 5", "spec.intervalSeconds in body should be greater than or equal to 30"),
                Arguments.of("DrainReport", "intervalSeconds: 5", "spec.intervalSeconds in body should be greater than or equal to 10"),
                Arguments.of("DrainReport", "nodeSelector: {'bad key!': a}", "nodeSelector keys must be label keys"),
                Arguments.of("DrainReport", "nodeSelector: {pool: 'not a value'}", "nodeSelector values must be label values"),
                Arguments.of("DrainReport", "drain: {force: maybe}", "spec.drain.force in body must be of type boolean"),
                Arguments.of("DrainReport", "maxEventsPerRun: 0", "spec.maxEventsPerRun in body should be greater than or equal to 1"),
                Arguments.of("VMMapAudit", "maxEventsPerRun: 0", "spec.maxEventsPerRun in body should be greater than or equal to 1"),
                Arguments.of("VMMapAudit", "suspend: sometimes", "spec.suspend: Invalid value: \"string\": spec.suspend in body must be of type boolean"),
                // node names: a set of DNS subdomains, as Node names are
                Arguments.of("ScaleDown", "nodeNames: [w1, w2, w1]", "spec.nodeNames[2]: Duplicate value: \"w1\""),
                Arguments.of("ScaleDown", "nodeNames: [Worker_1]", "nodeNames must be Node names"),
                Arguments.of("ScaleDown", "nodeNames: ['w1.']", "nodeNames must be Node names"),
                Arguments.of("ScaleDown", "nodeNames: [" + "a".repeat(254) + "]", tooLong("spec.nodeNames[0]", 253)),
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
                        tooLong("spec.nodeSelector.pool", 63)),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  nodeSelector: {" + "k".repeat(64) + ": x}\n  executor: {type: CloudStackIso}",
                        "nodeSelector keys must be label keys"),
                // a selector beside the deprecated field it replaces (what a selector itself must be: malformedSelectors)
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  selector: {matchLabels: {pool: a}}\n  nodeSelector: {pool: a}\n"
                        + "  executor: {type: CloudStackIso}", "set spec.selector or the deprecated spec.nodeSelector, not both"),
                Arguments.of("DrainReport", "selector: {matchExpressions: [{key: pool, operator: Exists}]}\n  nodeSelector: {pool: a}",
                        "set spec.selector or the deprecated spec.nodeSelector, not both"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso}\n"
                        + "  drain: {selector: {matchLabels: {app: web}}, podSelector: 'app=web'}",
                        "set spec.drain.selector or the deprecated spec.drain.podSelector, not both"),
                Arguments.of("ScaleDown", "nodeNames: [a]\n  drain: {selector: {matchLabels: {app: web}}, podSelector: 'app=web'}",
                        "set spec.drain.selector or the deprecated spec.drain.podSelector, not both"),
                Arguments.of("DrainReport", "drain: {selector: {matchExpressions: [{key: app, operator: Exists}]}, podSelector: app}",
                        "set spec.drain.selector or the deprecated spec.drain.podSelector, not both"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, script: {configMapRef: {name: Upgrade_Scripts, key: up.sh}}}",
                        "configMapRef.name must be a ConfigMap name"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, script: {configMapRef: {name: upgrade, key: ../up.sh}}}",
                        "configMapRef.key must be a ConfigMap key"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: Script, cloudStackIso: {}, script: {configMapRef: {name: u, key: k}}}",
                        "executor.cloudStackIso applies only with type CloudStackIso"),
                Arguments.of("NodeUpgrade", "targetVersion: v1.33.4\n  executor: {type: CloudStackIso, cloudStackIso: {kubernetesVersionId: latest}}",
                        "kubernetesVersionId must be a CloudStack id (a UUID)"),
                Arguments.of("VMMapAudit", "clusterId: prod-cluster", "clusterId must be a CloudStack id (a UUID)")));
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
    void onlyPausedAndTheWindowOfAScaleDownMayChange() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: ScaleDown\nmetadata:\n  name: immutable-sd\nspec:\n  nodeNames: [a]\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            GenericKubernetesResource paused = client.resource(created).edit(sd -> {
                spec(sd).put("paused", true);
                spec(sd).put("window", java.util.Map.of("days", java.util.List.of("Sat"), "start", "22:00", "end", "04:00", "timeZone", "Europe/Berlin"));
                return sd;
            });
            assertThat(spec(paused)).containsEntry("paused", true).containsKey("window");

            assertThatThrownBy(() -> client.resource(paused).edit(sd -> {
                spec(sd).put("nodeNames", java.util.List.of("b"));
                return sd;
            })).isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.nodeNames cannot change while the ScaleDown exists; only spec.paused and spec.window may");
            assertThatThrownBy(() -> client.resource(paused).edit(sd -> {
                spec(sd).put("drain", java.util.Map.of("force", true));
                return sd;
            })).as("a field that was not set cannot be added either").isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.drain cannot change");
        } finally {
            client.resource(created).delete();
        }
    }

    @Test
    void onlyPausedTheWindowAndMaxUnavailableOfANodeUpgradeMayChange() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata:\n  name: immutable-nu\nspec:\n  targetVersion: v1.33.4\n"
                + "  executor: {type: CloudStackIso}\n  nodeSelector: {pool: none}\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            GenericKubernetesResource wider = client.resource(created).edit(nu -> {
                spec(nu).put("maxUnavailable", "25%");
                spec(nu).put("paused", true);
                return nu;
            });
            assertThat(spec(wider)).containsEntry("maxUnavailable", "25%");

            assertThatThrownBy(() -> client.resource(wider).edit(nu -> {
                spec(nu).put("targetVersion", "v1.34.0");
                return nu;
            })).isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.targetVersion cannot change while the NodeUpgrade exists; only spec.paused, spec.window and spec.maxUnavailable may")
                    .hasMessageContaining("retry this one with the annotation nodeops.cks.dev/retry");
        } finally {
            client.resource(created).delete();
        }
    }

    /**
     * Bed: the API server alone, no operator. Actor: a person moving a NodeUpgrade from the deprecated spec.nodeSelector to
     * spec.selector (#35). The move to the same labels is one edit the API server lets through; a move that selects other
     * nodes, and any later change of the selector, is refused like every other change of the upgrade's nodes.
     */
    @Test
    void aNodeSelectorMayMoveToTheSameMatchLabelsButTheSelectorMayNotChange() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata:\n  name: moving-nu\nspec:\n  targetVersion: v1.33.4\n"
                + "  executor: {type: CloudStackIso}\n  nodeSelector: {pool: blue}\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            assertThatThrownBy(() -> client.resource(created).edit(nu -> {
                spec(nu).remove("nodeSelector");
                spec(nu).put("selector", java.util.Map.of("matchLabels", java.util.Map.of("pool", "green")));
                return nu;
            })).as("other labels select other nodes").isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.selector cannot change while the NodeUpgrade exists");
            assertThatThrownBy(() -> client.resource(created).edit(nu -> {
                spec(nu).remove("nodeSelector");
                spec(nu).put("selector", java.util.Map.of("matchLabels", java.util.Map.of("pool", "blue"), "matchExpressions",
                        java.util.List.of(java.util.Map.of("key", "node-role.kubernetes.io/control-plane", "operator", "DoesNotExist"))));
                return nu;
            })).as("an expression narrows the selection").isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.nodeSelector cannot change (its labels may move to spec.selector.matchLabels)");

            GenericKubernetesResource moved = client.resource(created).edit(nu -> {
                spec(nu).remove("nodeSelector");
                spec(nu).put("selector", java.util.Map.of("matchLabels", java.util.Map.of("pool", "blue")));
                return nu;
            });

            assertThat(spec(moved)).doesNotContainKey("nodeSelector").containsEntry("selector", java.util.Map.of("matchLabels", java.util.Map.of("pool", "blue")));
            assertThatThrownBy(() -> client.resource(moved).edit(nu -> {
                spec(nu).put("selector", java.util.Map.of("matchExpressions",
                        java.util.List.of(java.util.Map.of("key", "node-role.kubernetes.io/control-plane", "operator", "DoesNotExist"))));
                return nu;
            })).isInstanceOf(KubernetesClientException.class).hasMessageContaining("spec.selector cannot change while the NodeUpgrade exists");
            assertThatThrownBy(() -> client.resource(moved).edit(nu -> {
                spec(nu).remove("selector");
                spec(nu).put("nodeSelector", java.util.Map.of("pool", "blue"));
                return nu;
            })).as("no way back to the deprecated field").isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("spec.nodeSelector cannot change");
        } finally {
            client.resource(created).delete();
        }
    }

    /**
     * Bed: the API server alone, no operator. Actor: a person editing a Continuous NodeUpgrade. Its targetVersion may change
     * (a new rollout), its mode and holdIntervalSeconds may not.
     */
    @Test
    void theTargetOfAContinuousNodeUpgradeMayChangeButItsModeMayNot() {
        String yaml = "apiVersion: nodeops.cks.dev/v1alpha1\nkind: NodeUpgrade\nmetadata:\n  name: continuous-nu\nspec:\n  targetVersion: v1.33.4\n"
                + "  mode: Continuous\n  executor: {type: CloudStackIso}\n  nodeSelector: {pool: none}\n";
        GenericKubernetesResource created = client.resource(client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class)).create();
        try {
            assertThat(spec(created)).as("defaulted").containsEntry("holdIntervalSeconds", 60);
            GenericKubernetesResource retargeted = client.resource(created).edit(nu -> {
                spec(nu).put("targetVersion", "v1.34.0");
                return nu;
            });
            assertThat(spec(retargeted)).containsEntry("targetVersion", "v1.34.0");

            assertThatThrownBy(() -> client.resource(retargeted).edit(nu -> {
                spec(nu).put("mode", "Once");
                return nu;
            })).isInstanceOf(KubernetesClientException.class).hasMessageContaining("spec.mode cannot change");
            assertThatThrownBy(() -> client.resource(retargeted).edit(nu -> {
                spec(nu).put("holdIntervalSeconds", 5);
                return nu;
            })).isInstanceOf(KubernetesClientException.class).hasMessageContaining("spec.holdIntervalSeconds cannot change");
        } finally {
            client.resource(created).delete();
        }
    }

    @SuppressWarnings("unchecked")
    private static java.util.Map<String, Object> spec(GenericKubernetesResource resource) {
        return (java.util.Map<String, Object>) resource.getAdditionalProperties().get("spec");
    }
}
