package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The chart lints, renders, installs into the real API server, and grants the operator's
 * ServiceAccount what the code uses: `kubectl auth can-i` answers yes for verbs it needs and no for
 * what it must never do. That the grants are exactly the calls the code makes is LeastPrivilegeIT's proof.
 */
@ExtendWith(TestBedExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HelmChartIT {
    static final String CHART = "deploy/helm/cks-node-operator";
    static final String RELEASE = "rbac";
    static final String NAMESPACE = "cks-chart-it";
    static final String SERVICE_ACCOUNT = RELEASE + "-cks-node-operator";
    static final String SECRET = "cloudstack-chart-it";

    private TestBed bed;
    /** What `helm install` printed, its NOTES included. */
    private String installed;

    @BeforeAll
    void install(TestBed bed) {
        this.bed = bed;
        bed.runTool("helm", "uninstall", RELEASE, "-n", NAMESPACE, "--wait");
        // A namespace left labelled by an earlier run would silence the install notes' Pod Security warning.
        bed.runTool("kubectl", "label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce-");
        TestBed.recordGrantedSecret("kube-system", SECRET);
        // The bed's CRDs are in the cluster already: installed as the README says for that case (Helm 4 would apply
        // crds/ server-side and refuse to take the fields of the CRDs' other field manager).
        installed = bed.tool("helm", "install", RELEASE, CHART, "-n", NAMESPACE, "--create-namespace", "--skip-crds",
                "--set", "cloudstack.secretName=" + SECRET, "--set", "replicaCount=1", "--wait", "--timeout", "2m");
    }

    @Test
    void chartLintsAndRendersEveryOptionalPiece() {
        assertThat(bed.tool("helm", "lint", CHART, "--strict")).contains("1 chart(s) linted, 0 chart(s) failed");
        String rendered = bed.tool("helm", "template", "t", CHART, "--kube-version", bed.serverVersion(), "--set", "metrics.serviceMonitor.enabled=true",
                "--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.grafanaDashboard.enabled=true");
        assertThat(rendered).contains("kind: ServiceMonitor", "kind: PrometheusRule", "alert: CksVmMapDrift", "grafana_dashboard: \"1\"",
                "\"uid\": \"cks-node-operator\"",
                "alert: CksDrainBlocked", "alert: CksOperationFailed", "kind: PodDisruptionBudget", "kind: Deployment");
        assertThat(bed.runTool("helm", "template", "t", CHART, "--kube-version", bed.serverVersion(), "--set", "drain.retries=-1").output())
                .as("values.schema.json rejects bad values").contains("minimum: got -1, want 0");
    }

    @Test
    void theInstallNotesWarnOfAnImageNoRegistryHasAndANamespaceThatRefusesPrivilegedPodsAndOnlyThen() {
        assertThat(installed).contains("NOTES:")
                .contains("WARNING: the image cks-node-operator:" + ReleaseVersion.current() + " is on no public registry")
                .contains("WARNING: namespace " + NAMESPACE + " does not allow privileged pods")
                .contains("kubectl label namespace " + NAMESPACE + " pod-security.kubernetes.io/enforce=privileged");

        bed.tool("kubectl", "label", "namespace", NAMESPACE, "pod-security.kubernetes.io/enforce=privileged", "--overwrite");
        String fixed = bed.tool("helm", "upgrade", RELEASE, CHART, "-n", NAMESPACE, "--reuse-values", "--dry-run=server",
                "--set", "image.repository=registry.example/cks-node-operator");
        assertThat(fixed).contains("NOTES:").doesNotContain("WARNING");
    }

    /**
     * GitOps tools render with {@code helm template}, which knows no cluster: Helm 3 then assumes v1.20.0 and stops on
     * the chart's kubeVersion, Helm 4 assumes a Kubernetes newer than any CKS cluster runs and renders for it. Both
     * READMEs quote Helm 3's refusal and Helm 4's assumption, and say to pass {@code --kube-version}.
     */
    @Test
    void helmTemplateWithoutKubeVersionIsRefusedByHelm3AndAssumesANewKubernetesInHelm4AsBothReadmesSay() throws IOException {
        TestBed.ToolResult refused = bed.runTool("helm3", "template", "t", CHART);
        assertThat(refused.exitCode()).as("helm3 template without --kube-version:\n%s", refused.output()).isNotZero();
        String refusal = refused.output().lines().filter(line -> line.contains("kubeVersion")).findFirst().orElseThrow().replaceFirst("^Error: ", "");
        assertThat(bed.runTool("helm", "template", "t", CHART).exitCode()).as("helm template (Helm 4) without --kube-version renders").isZero();
        // What Helm 4 assumes, read from a chart that prints it.
        Path probe = Path.of("target/helm-kube-version-probe");
        Files.createDirectories(probe.resolve("templates"));
        Files.writeString(probe.resolve("Chart.yaml"), "apiVersion: v2\nname: probe\nversion: 0.1.0\n");
        Files.writeString(probe.resolve("templates/version.yaml"), "# {{ .Capabilities.KubeVersion.Version }}\n");
        String assumed = bed.tool("helm", "template", "p", probe.toString()).lines().filter(l -> l.startsWith("# v")).findFirst().orElseThrow().substring(2);
        for (Path readme : List.of(Path.of("README.md"), Path.of(CHART, "README.md"))) {
            assertThat(Files.readString(readme).replaceAll("\\s+", " ")).as("%s quotes Helm 3's refusal, Helm 4's assumption, and says to pass --kube-version",
                    readme).contains(refusal).contains("Helm 4 assumes " + assumed).contains("--kube-version");
        }
    }

    @Test
    void chartCrdsAreTheGeneratedOnes() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("deploy/crds"))) {
            for (Path crd : files.toList()) {
                assertThat(Files.readString(Path.of(CHART, "crds", crd.getFileName().toString())))
                        .as("chart copy of %s", crd).isEqualTo(Files.readString(crd));
            }
        }
    }

    static Stream<List<String>> allowed() {
        return Stream.of(
                List.of("list", "nodes"), List.of("watch", "nodes"), List.of("patch", "nodes"), List.of("delete", "nodes"),
                List.of("list", "pods", "-A"), List.of("watch", "pods", "-A"), List.of("create", "pods", "--subresource=eviction", "-n", "shop"),
                List.of("list", "poddisruptionbudgets.policy", "-A"), List.of("watch", "poddisruptionbudgets.policy", "-n", "shop"),
                List.of("get", "replicasets.apps", "-n", "shop"), List.of("get", "statefulsets.apps", "-n", "shop"),
                List.of("patch", "nodeupgrades.nodeops.cks.dev"), List.of("get", "scaledowns.nodeops.cks.dev"),
                List.of("patch", "scaledowns.nodeops.cks.dev", "--subresource=status"),
                List.of("patch", "vmmapaudits.nodeops.cks.dev", "--subresource=status"),
                List.of("list", "drainreports.nodeops.cks.dev"), List.of("patch", "drainreports.nodeops.cks.dev", "--subresource=status"),
                List.of("create", "events", "-n", "default"),
                List.of("create", "jobs.batch", "-n", NAMESPACE), List.of("patch", "jobs.batch", "-n", NAMESPACE), List.of("delete", "jobs.batch", "-n", NAMESPACE),
                List.of("create", "pods", "-n", NAMESPACE),
                List.of("get", "pods", "--subresource=log", "-n", NAMESPACE),
                List.of("get", "configmaps", "-n", NAMESPACE),
                List.of("patch", "leases.coordination.k8s.io", "-n", NAMESPACE), List.of("update", "leases.coordination.k8s.io", "-n", NAMESPACE),
                List.of("get", "secrets/" + SECRET, "-n", "kube-system"));
    }

    static Stream<List<String>> forbidden() {
        return Stream.of(
                List.of("delete", "pods", "-n", "shop"),
                List.of("get", "secrets", "-n", "kube-system"),
                List.of("get", "secrets/other-secret", "-n", "kube-system"),
                List.of("list", "secrets", "-A"),
                List.of("get", "secrets", "-n", NAMESPACE),
                List.of("create", "jobs.batch", "-n", "default"),
                List.of("get", "customresourcedefinitions.apiextensions.k8s.io"),
                List.of("delete", "customresourcedefinitions.apiextensions.k8s.io"),
                List.of("create", "pods", "-n", "shop"),
                List.of("get", "pods", "--subresource=log", "-n", "shop"),
                List.of("patch", "pods", "-n", "shop"),
                List.of("update", "deployments.apps", "-n", "shop"),
                List.of("create", "events", "-n", "shop"),
                List.of("create", "clusterrolebindings.rbac.authorization.k8s.io"),
                // Grants the operator does not use (LeastPrivilegeIT proves which it does):
                List.of("delete", "jobs.batch", "-n", "default"), List.of("update", "nodeupgrades.nodeops.cks.dev"),
                List.of("watch", "secrets/" + SECRET, "-n", "kube-system"), List.of("list", "configmaps", "-n", NAMESPACE),
                List.of("patch", "events", "-n", "default"));
    }

    @ParameterizedTest(name = "can {0}")
    @MethodSource("allowed")
    void serviceAccountMayDoWhatTheCodeNeeds(List<String> verbAndResource) {
        assertThat(canI(verbAndResource)).as("kubectl auth can-i %s", verbAndResource).isEqualTo("yes");
    }

    @ParameterizedTest(name = "cannot {0}")
    @MethodSource("forbidden")
    void serviceAccountMayNotDoMore(List<String> verbAndResource) {
        assertThat(canI(verbAndResource)).as("kubectl auth can-i %s", verbAndResource).isEqualTo("no");
    }

    @Test
    void podDeleteIsGrantedOnlyWhenDisableEvictionOrTheEscalationLadderIsAllowed() {
        for (String value : List.of("drain.allowDisableEviction=true", "drain.allowEscalationDelete=true")) {
            assertThat(grantsPodDelete(bed.tool("helm", "template", "t", CHART, "--kube-version", bed.serverVersion(), "--set", value))).as(value).isTrue();
        }
        assertThat(grantsPodDelete(bed.tool("helm", "template", "t", CHART, "--kube-version", bed.serverVersion()))).as("defaults").isFalse();
    }

    /** Whether a ClusterRole or Role of the rendered chart lets the operator delete pods. */
    private static boolean grantsPodDelete(String rendered) {
        return Stream.of(rendered.split("(?m)^---$"))
                .filter(document -> document.contains("kind: ClusterRole\n") || document.contains("kind: Role\n"))
                .flatMap(document -> Serialization.unmarshal(document, ClusterRole.class).getRules().stream())
                .anyMatch(rule -> rule.getApiGroups().contains("") && rule.getResources().contains("pods") && rule.getVerbs().contains("delete"));
    }

    /**
     * The proof that the ClusterRole and Roles are complete: the operator authenticated as the chart's
     * ServiceAccount (a token from the TokenRequest API, nothing else) carries a ScaleDown to the end.
     */
    @Test
    void theOperatorRunningAsTheChartsServiceAccountCompletesAScaleDown() throws Exception {
        KubernetesClient client = bed.client();
        List<Node> nodes = new ArrayList<>(List.of(bed.addControlPlane("chart-it"), bed.addWorker("chart-it"), bed.addWorker("chart-it")));
        String leaving = nodes.get(2).getMetadata().getName();
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "chart-it", "CloudManaged", nodes)) {
            assertThat(cloudStack.operatorProperties()).containsEntry("cks.cloudstack.secret-name", SECRET);
            Path kubeconfig = bed.kubeconfigForServiceAccount(NAMESPACE, SERVICE_ACCOUNT);
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.namespace", NAMESPACE);
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            try (OperatorProcess operator = OperatorProcess.start(bed, kubeconfig, "as-service-account", properties)) {
                client.resource(scaleDown("rbac-proof", leaving)).create();
                Awaitility.await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
                    ScaleDown current = client.resources(ScaleDown.class).withName("rbac-proof").get();
                    assertThat(current.getStatus()).isNotNull();
                    assertThat(current.getStatus().getPhase()).as("%s", current.getStatus().getMessage())
                            .isEqualTo(ScaleDownStatus.Phase.Succeeded);
                });
                assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).hasSize(1);
                assertThat(operator.output()).as("the operator was never refused by RBAC").doesNotContainIgnoringCase("forbidden");
            } finally {
                client.resources(ScaleDown.class).withName("rbac-proof").delete();
            }
        }
    }

    private static ScaleDown scaleDown(String name, String node) {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName(name);
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(List.of(node));
        scaleDown.setSpec(spec);
        return scaleDown;
    }

    private String canI(List<String> verbAndResource) {
        String[] args = Stream.concat(Stream.of("auth", "can-i"),
                Stream.concat(verbAndResource.stream(), Stream.of("--as=system:serviceaccount:" + NAMESPACE + ":" + SERVICE_ACCOUNT)))
                .toArray(String[]::new);
        // kubectl prints warnings (e.g. "not namespace scoped") before its one-word answer.
        List<String> lines = bed.runTool("kubectl", args).output().strip().lines().toList();
        return lines.get(lines.size() - 1).strip();
    }
}
