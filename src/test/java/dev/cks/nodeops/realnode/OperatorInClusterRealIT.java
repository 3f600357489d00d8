package dev.cks.nodeops.realnode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.deploy.ReleaseVersion;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.RealNodeExtension;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The operator as a cluster owner runs it: installed from the offline bundle (hack/bundle.sh) as on an
 * air-gapped site, its images imported into the real node's containerd, the packaged chart installed with the
 * bundle's values, and then driving
 * operations from inside the cluster. One ordered scenario, because each step starts from the
 * state the previous one left (an installed release, a running operation).
 */
@ExtendWith(RealNodeExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorInClusterRealIT {
    static final String CHART = "deploy/helm/cks-node-operator";
    static final String RELEASE = "cks-node-operator";
    static final String NAMESPACE = TestBed.OPERATOR_NAMESPACE;
    /** The chart names its objects after a release whose name contains the chart's, as this one does, by the release alone. */
    static final String FULLNAME = RELEASE;
    static final String IMAGE = "cks-node-operator:" + ReleaseVersion.current();
    static final String NEXT_TAG = ReleaseVersion.current() + "-next";

    private TestBed bed;
    private KubernetesClient client;
    private CloudStackFixture cloudStack;
    private final List<String> workers = new ArrayList<>();
    private String realNode;

    @BeforeAll
    void install(TestBed bed) throws Exception {
        this.bed = bed;
        this.client = bed.client();
        this.realNode = bed.realNode("node");
        for (Node node : client.nodes().withLabel("type", "kwok").list().getItems()) {
            workers.add(node.getMetadata().getName());
        }
        assertThat(workers).as("the real bed's KWOK workers").hasSizeGreaterThanOrEqualTo(2);
        List<Node> nodes = new ArrayList<>();
        nodes.add(client.nodes().withName(realNode).get());
        workers.forEach(w -> nodes.add(client.nodes().withName(w).get()));
        cloudStack = CloudStackFixture.forNodes(bed, TestBed.CLUSTER, "CloudManaged", nodes);

        // Installed as an air-gapped site does it (README, "Air-gapped install"): from the offline bundle, its two
        // images imported into the node's containerd, the chart from its package with the bundle's values.
        Path bundle = RealImages.offlineBundle(bed);
        // Exactly the import commands of the bundle's INSTALL.md, run in the bundle's directory.
        List<String[]> imports = Files.readAllLines(bundle.resolve("INSTALL.md")).stream().map(String::strip)
                .filter(l -> l.startsWith("ctr -n k8s.io images import ")).map(l -> l.substring("ctr -n k8s.io images import ".length()).split(" ")).toList();
        assertThat(imports).as("INSTALL.md's image imports").hasSize(2);
        for (String[] arguments : imports) {
            arguments[arguments.length - 1] = bundle.resolve(arguments[arguments.length - 1]).toString();
            RealImages.importArchive(bed, arguments);
        }
        // As the README's install says: the upgrade Jobs are privileged pods.
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(NAMESPACE)
                .addToLabels("pod-security.kubernetes.io/enforce", "privileged").endMetadata().build()).serverSideApply();
        Path script = bed.projectRoot().resolve("target/realnode-upgrade.sh");
        Files.writeString(script, RealUpgrade.script(bed.realNode("stateDir")));
        bed.tool("helm", "install", RELEASE, bundle.resolve("cks-node-operator-" + ReleaseVersion.current() + ".tgz").toString(), "-n", NAMESPACE,
                "-f", bundle.resolve("values-offline.yaml").toString(), "--set", "replicaCount=1",
                // Only the real node runs containers: a replica on a KWOK node would only look Running.
                "--set", "nodeSelector.kubernetes\\.io/hostname=" + realNode,
                "--set", "cloudstack.secretName=" + cloudStack.operatorProperties().get("cks.cloudstack.secret-name"),
                "--set", "cloudstack.clusterId=" + cloudStack.cluster().id(),
                // Not the bundle's upgrade shell: on this machine even root may not enter PID 1's namespaces, and the
                // bed's shell image makes nsenter -t 1 enter the process playing kubelet.service (docs/real-node.md).
                // helm test runs the bundle's shell (tests.image from values-offline.yaml).
                "--set", "upgrade.jobImage=" + bed.realNode("shellImage"),
                "--set-file", "upgrade.scripts.realnode=" + script,
                "--set", "audit.enabled=false",
                "--wait", "--timeout", "5m");
    }

    @AfterAll
    void cleanUp() {
        bed.runTool("helm", "uninstall", RELEASE, "-n", NAMESPACE, "--wait");
        if (cloudStack != null) {
            cloudStack.close();
        }
    }

    @Test
    @Order(1)
    void theOperatorPodRunsTheBuiltImageAsUid185WithAReadOnlyRoot() throws IOException {
        Pod pod = operatorPod();
        assertThat(pod.getSpec().getNodeName()).isEqualTo(realNode);
        assertThat(pod.getSpec().getContainers().get(0).getImage()).isEqualTo(IMAGE);
        assertThat(pod.getSpec().getContainers().get(0).getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(pod.getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(TestBed.isReady(client.nodes().withName(realNode).get())).isTrue();
        assertThat(pod.getStatus().getConditions()).anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        // What the kernel says about the container's process, found by its container id in /proc.
        long pid = RealProcesses.pidOfContainer(pod.getStatus().getContainerStatuses().get(0).getContainerID());
        assertThat(RealProcesses.status(pid, "Uid")).startsWith("185\t185");
        assertThat(RealProcesses.status(pid, "Gid")).startsWith("185\t185");
        assertThat(RealProcesses.rootMountOptions(pid).split(",")).as("the container's / is mounted read-only").contains("ro");
        assertThat(RealProcesses.commandLine(pid)).contains("/opt/java/bin/java", "-jar", "/deployments/quarkus-run.jar");
    }

    @Test
    @Order(2)
    void thePodHoldsTheLeaderLease() {
        String pod = operatorPod().getMetadata().getName();
        Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(leaseHolder()).isEqualTo(pod));
    }

    @Test
    @Order(3)
    void theCrdsComeFromTheChartAndAreServed() {
        for (String crd : List.of("nodeupgrades", "scaledowns", "vmmapaudits", "drainreports")) {
            var definition = client.apiextensions().v1().customResourceDefinitions().withName(crd + ".nodeops.cks.dev").get();
            assertThat(definition).as(crd).isNotNull();
            assertThat(definition.getStatus().getConditions()).anyMatch(c -> "Established".equals(c.getType()) && "True".equals(c.getStatus()));
        }
        assertThat(bed.tool("kubectl", "get", "sd,nu,vma")).doesNotContain("error");
    }

    @Test
    @Order(4)
    void theInClusterOperatorCompletesAScaleDown() {
        String leaving = workers.get(0);
        client.resource(scaleDown("real-remove-one", leaving)).create();
        ScaleDown done = awaitScaleDown("real-remove-one", ScaleDownStatus.Phase.Succeeded, Duration.ofMinutes(3));
        assertThat(done.getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).hasSize(1);
    }

    @Test
    @Order(5)
    void metricsAreScrapedThroughTheService() throws Exception {
        var service = client.services().inNamespace(NAMESPACE).withLabel("app.kubernetes.io/instance", RELEASE).list().getItems().get(0);
        String url = "http://" + service.getSpec().getClusterIP() + ":" + service.getSpec().getPorts().get(0).getPort() + "/q/metrics";
        // Through the ClusterIP: kube-proxy's rules on this host send it to the pod on the node's bridge.
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("jvm_memory_used_bytes")
                .containsPattern("cks_operations_total\\{[^}]*kind=\"ScaleDown\"[^}]*outcome=\"Succeeded\"[^}]*} 1\\.0");
    }

    /**
     * A ScaleDown whose drain a PodDisruptionBudget holds is in flight while `helm upgrade` replaces
     * the operator's pod with one of a new image; the new pod takes the Lease over and finishes it.
     */
    @Test
    @Order(6)
    void helmUpgradeToANewImageKeepsAnInFlightOperationGoing() throws Exception {
        String leaving = workers.get(1);
        // The operator refuses to remove the last schedulable worker: one more stays.
        cloudStack.addNodeVm(bed.addWorker(TestBed.CLUSTER));
        String ns = bed.newNamespace("real-upgrade");
        bed.tool("kubectl", "-n", ns, "create", "deployment", "held", "--image=" + bed.realNode("shellImage"), "--", "sleep", "3600");
        bed.tool("kubectl", "-n", ns, "patch", "deployment", "held", "-p",
                "{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"kubernetes.io/hostname\":\"" + leaving + "\"}}}}}");
        client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("held").endMetadata()
                .withNewSpec().withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(1))
                .withNewSelector().addToMatchLabels("app", "held").endSelector().endSpec().build()).create();
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
            var pdb = client.policy().v1().podDisruptionBudget().inNamespace(ns).withName("held").get();
            return pdb.getStatus() != null && Integer.valueOf(1).equals(pdb.getStatus().getCurrentHealthy());
        });
        ScaleDown scaleDown = scaleDown("real-held", leaving);
        scaleDown.getSpec().getDrain().setTimeoutSeconds(600);
        client.resource(scaleDown).create();
        Awaitility.await("the drain is held by the PDB").atMost(Duration.ofMinutes(2)).until(() -> {
            ScaleDown current = client.resources(ScaleDown.class).withName("real-held").get();
            return current.getStatus() != null && current.getStatus().getPhase() == ScaleDownStatus.Phase.Draining
                    && client.nodes().withName(leaving).get().getSpec().getUnschedulable() == Boolean.TRUE;
        });
        String oldPod = operatorPod().getMetadata().getName();

        RealImages.build(bed, NEXT_TAG);
        RealImages.importArchive(bed, "target/cks-node-operator-" + NEXT_TAG + ".docker.tar");
        bed.tool("helm", "upgrade", RELEASE, CHART, "-n", NAMESPACE, "--reuse-values", "--set", "image.tag=" + NEXT_TAG,
                "--wait", "--timeout", "5m");
        Pod newPod = operatorPod();
        assertThat(newPod.getMetadata().getName()).isNotEqualTo(oldPod);
        assertThat(newPod.getSpec().getContainers().get(0).getImage()).isEqualTo("cks-node-operator:" + NEXT_TAG);
        Awaitility.await("the new pod holds the Lease").atMost(Duration.ofSeconds(90))
                .untilAsserted(() -> assertThat(leaseHolder()).isEqualTo(newPod.getMetadata().getName()));
        ScaleDown during = client.resources(ScaleDown.class).withName("real-held").get();
        assertThat(during.getStatus().getPhase()).as("still draining, not rolled back by the hand-over")
                .isEqualTo(ScaleDownStatus.Phase.Draining);

        client.policy().v1().podDisruptionBudget().inNamespace(ns).withName("held").delete();
        awaitScaleDown("real-held", ScaleDownStatus.Phase.Succeeded, Duration.ofMinutes(3));
        assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).hasSize(2);
    }

    /**
     * The node upgrade drains real pods from the real node (grace period, preStop hook, readiness
     * probes, a PDB) and evicts the operator's own pod with them: the standby takes over.
     */
    @Test
    @Order(7)
    void aNodeUpgradeOfTheOperatorsOwnNodeDrainsRealPodsGracefully() throws Exception {
        new RealUpgrade(bed, client, NAMESPACE, FULLNAME, cloudStack).run();
    }

    /**
     * What the README says about uninstalling: Helm leaves the CRDs (it never deletes what a chart's
     * crds/ installed) and so every CR with its status; only the operator goes. ScaleDowns and
     * NodeUpgrades carry the operator's finalizer: deleted without the operator they stay
     * Terminating until it returns, or until their finalizer is removed by hand.
     */
    /**
     * `helm test` as a cluster owner runs it after an install: its pod (on the real node, where the
     * operator may run; a KWOK node would only pretend to run it) asks the metrics Service for the
     * readiness probe. It passes while a replica is ready and fails when none is.
     */
    @Test
    @Order(8)
    void helmTestPassesWhileAReplicaIsReadyAndFailsWhenNoneIs() {
        operatorPod();
        TestBed.ToolResult passed = bed.runTool("helm", "test", RELEASE, "-n", NAMESPACE, "--timeout", "3m");
        assertThat(passed.exitCode()).as("%s%nits pods:%n%s", passed.output(), testPodsAndLogs()).isZero();
        assertThat(passed.output()).containsPattern("Phase:\\s+Succeeded");

        client.apps().deployments().inNamespace(NAMESPACE).withName(FULLNAME).scale(0);
        try {
            Awaitility.await("no operator pod").atMost(Duration.ofMinutes(2)).until(() -> operatorPods().isEmpty());
            TestBed.ToolResult failed = bed.runTool("helm", "test", RELEASE, "-n", NAMESPACE, "--timeout", "3m");
            assertThat(failed.exitCode()).as("helm test without a ready replica: %s", failed.output()).isNotZero();
            assertThat(failed.output()).contains(FULLNAME + "-test-ready");
        } finally {
            client.apps().deployments().inNamespace(NAMESPACE).withName(FULLNAME).scale(1);
        }
        operatorPod();
    }

    /**
     * The air-gapped promise of the offline bundle: the kubelet found every image of the release on the node (its
     * "already present on machine"), the operator's and the bundle's shell (helm test's pod) among them, and pulled
     * none.
     */
    @Test
    @Order(9)
    void nothingTheBundleInstalledWasPulledFromARegistry() throws IOException {
        List<io.fabric8.kubernetes.api.model.Event> events = client.v1().events().inNamespace(NAMESPACE).list().getItems();
        assertThat(events).as("the kubelet's image events in %s", NAMESPACE).filteredOn(e -> "Pulling".equals(e.getReason())).isEmpty();
        String shell = Files.readAllLines(RealImages.bundleDirectory(bed).resolve("values-offline.yaml")).stream()
                .filter(l -> l.strip().startsWith("image: \"cks-node-operator/upgrade-shell:")).findFirst().orElseThrow()
                .replaceFirst(".*image: \"([^\"]+)\".*", "$1");
        List<String> present = events.stream().filter(e -> "Pulled".equals(e.getReason()) && e.getMessage().contains("already present on machine"))
                .map(io.fabric8.kubernetes.api.model.Event::getMessage).toList();
        assertThat(present).as("the operator's image found on the node").anyMatch(m -> m.contains("\"" + IMAGE + "\""));
        assertThat(present).as("the bundle's shell found on the node (helm test's pod)").anyMatch(m -> m.contains("\"" + shell + "\""));
    }

    @Test
    @Order(10)
    void helmUninstallLeavesTheCrdsAndTheCustomResources() {
        VMMapAudit audit = new VMMapAudit();
        audit.getMetadata().setName("real-kept");
        client.resource(audit).create();
        bed.tool("helm", "uninstall", RELEASE, "-n", NAMESPACE, "--wait");
        Awaitility.await().atMost(Duration.ofSeconds(90)).until(() -> operatorPods().isEmpty());
        for (String crd : List.of("nodeupgrades", "scaledowns", "vmmapaudits", "drainreports")) {
            assertThat(client.apiextensions().v1().customResourceDefinitions().withName(crd + ".nodeops.cks.dev").get()).as(crd).isNotNull();
        }
        assertThat(client.resources(VMMapAudit.class).withName("real-kept").get()).isNotNull();
        ScaleDown kept = client.resources(ScaleDown.class).withName("real-held").get();
        assertThat(kept.getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(kept.getMetadata().getFinalizers()).isNotEmpty();

        client.resources(ScaleDown.class).withName("real-held").delete();
        Awaitility.await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10)).until(() -> {
            ScaleDown current = client.resources(ScaleDown.class).withName("real-held").get();
            return current != null && current.getMetadata().getDeletionTimestamp() != null;
        });
        bed.tool("kubectl", "patch", "sd", "real-held", "--type=merge", "-p", "{\"metadata\":{\"finalizers\":null}}");
        client.resources(VMMapAudit.class).withName("real-kept").delete();
        Awaitility.await("both gone").atMost(Duration.ofSeconds(30)).until(() -> client.resources(ScaleDown.class).withName("real-held").get() == null
                && client.resources(VMMapAudit.class).withName("real-kept").get() == null);
    }

    /** The helm test Job's pods, their state and their log: why a `helm test` failed. */
    private String testPodsAndLogs() {
        StringBuilder out = new StringBuilder();
        for (Pod pod : client.pods().inNamespace(NAMESPACE).withLabel("job-name", FULLNAME + "-test-ready").list().getItems()) {
            out.append(pod.getMetadata().getName()).append(" on ").append(pod.getSpec().getNodeName()).append(": ")
                    .append(pod.getStatus().getContainerStatuses()).append('\n')
                    .append(client.pods().inNamespace(NAMESPACE).withName(pod.getMetadata().getName()).getLog()).append('\n');
        }
        return out.toString();
    }

    private List<Pod> operatorPods() {
        // The Deployment's selector: not the helm test's pods (a failed test's stay, as Helm leaves them).
        return client.pods().inNamespace(NAMESPACE).withLabel("app.kubernetes.io/instance", RELEASE)
                .withLabel("app.kubernetes.io/name", "cks-node-operator").list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
    }

    private Pod operatorPod() {
        Awaitility.await("one Ready operator pod").atMost(Duration.ofMinutes(3)).until(() -> operatorPods().stream()
                .filter(p -> p.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))
                .count() == 1 && operatorPods().size() == 1);
        return operatorPods().get(0);
    }

    private String leaseHolder() {
        Lease lease = client.leases().inNamespace(NAMESPACE).withName("cks-node-operator-leader").get();
        return lease == null ? null : lease.getSpec().getHolderIdentity();
    }

    private ScaleDown awaitScaleDown(String name, ScaleDownStatus.Phase phase, Duration timeout) {
        Awaitility.await("ScaleDown " + name + " " + phase).atMost(timeout).untilAsserted(() -> {
            ScaleDown current = client.resources(ScaleDown.class).withName(name).get();
            assertThat(current.getStatus()).isNotNull();
            assertThat(current.getStatus().getPhase()).as("%s", current.getStatus().getMessage()).isEqualTo(phase);
        });
        return client.resources(ScaleDown.class).withName(name).get();
    }

    private static ScaleDown scaleDown(String name, String node) {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName(name);
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(List.of(node));
        scaleDown.setSpec(spec);
        return scaleDown;
    }
}
