package dev.cks.nodeops.shapes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import dev.cks.nodeops.common.LeaderElection;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.OperatorPods;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeSpec;
import dev.cks.nodeops.upgrade.UpgradeExecutor;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * One test's CKS cluster shape on the shared bed: a KWOK control-plane node (kubeadm's label and NoSchedule taint)
 * and KWOK workers, the cluster's VMs in the CloudStack simulator, the chart installed by Helm with its defaults but
 * {@code replicaCount} and a {@code nodeSelector} for these nodes, the operator's pods run by {@link OperatorPods},
 * upgrade Jobs played by {@link KubeletUpgradeSimulation}. Everything is removed on close.
 */
final class ShapeBed implements AutoCloseable {
    static final String CHART = "deploy/helm/cks-node-operator";
    static final String LABEL = "shape-it.nodeops.cks.dev/cluster";
    /** The chart's upgrade script, key {@code kubeadm} of ConfigMap {@code <fullname>-upgrade-scripts}. */
    static final String SCRIPT = "#!/bin/sh\n# $1: target version, $2: apply|node\nset -eu\n"
            + "if [ \"$2\" = apply ]; then kubeadm upgrade apply \"$1\" --yes; else kubeadm upgrade node; fi\nsystemctl restart kubelet\n";
    private static final Duration OPERATION_TIME = Duration.ofMinutes(6);

    final TestBed bed;
    final KubernetesClient client;
    final String name;
    /** The first control-plane node: the one a NodeUpgrade runs {@code kubeadm upgrade apply} on. */
    final String control;
    final List<String> controls = new ArrayList<>();
    final List<String> workers = new ArrayList<>();
    final String namespace;
    final String fullname;
    final CloudStackFixture cloudStack;
    final KubeletUpgradeSimulation kubelets;
    final OperatorPods pods;
    private final List<CustomResource<?, ?>> operations = new ArrayList<>();

    /**
     * The nodes at kubeletVersion, named and labelled after {@code name}, which is also the chart's release. The
     * control-plane nodes are listed as CKS's first control node is found: oldest creationTimestamp, then name
     * (nodes made within one second tie on the timestamp).
     */
    ShapeBed(TestBed bed, String name, int controlCount, int workerCount, int replicas, String kubeletVersion) throws Exception {
        this.bed = bed;
        this.client = bed.client();
        this.name = name;
        List<Node> made = new ArrayList<>();
        for (int i = 0; i < controlCount; i++) {
            made.add(bed.addNode(name, true, kubeletVersion));
        }
        made.stream().sorted(Comparator.comparing((Node n) -> Instant.parse(n.getMetadata().getCreationTimestamp()))
                .thenComparing(n -> n.getMetadata().getName())).forEach(n -> controls.add(n.getMetadata().getName()));
        this.control = controls.get(0);
        for (int i = 0; i < workerCount; i++) {
            workers.add(bed.addNode(name, false, kubeletVersion).getMetadata().getName());
        }
        List<Node> nodes = new ArrayList<>();
        for (String node : nodes()) {
            client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"" + LABEL + "\":\"" + name + "\"}}}");
            nodes.add(client.nodes().withName(node).get());
        }
        this.cloudStack = CloudStackFixture.forNodes(bed, name, "CloudManaged", nodes);
        this.namespace = bed.newNamespace(name);
        this.fullname = name + "-cks-node-operator";
        Path script = bed.projectRoot().resolve("target/" + name + "-upgrade.sh");
        Files.writeString(script, SCRIPT);
        String secret = cloudStack.operatorProperties().get("cks.cloudstack.secret-name");
        TestBed.recordGrantedSecret(CloudStackFixture.SECRET_NAMESPACE, secret);
        // --skip-crds: the bed's CRDs are there already (README, "Install").
        bed.tool("helm", "install", name, CHART, "-n", namespace, "--skip-crds", "--set", "replicaCount=" + replicas,
                "--set", "nodeSelector." + LABEL.replace(".", "\\.") + "=" + name, "--set", "cloudstack.secretName=" + secret,
                "--set-file", "upgrade.scripts.kubeadm=" + script, "--wait", "--timeout", "2m");
        this.kubelets = new KubeletUpgradeSimulation(client, namespace);
        this.pods = new OperatorPods(bed, namespace, Map.of("app.kubernetes.io/name", "cks-node-operator", "app.kubernetes.io/instance", name));
    }

    /** The control-plane nodes first (the first one first), then the workers. */
    List<String> nodes() {
        List<String> all = new ArrayList<>(controls);
        all.addAll(workers);
        return all;
    }

    /** Every node of this shape to the target with the chart's script, preflight Fail. */
    NodeUpgrade scriptUpgrade(String operation, String target) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName(operation);
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(target);
        spec.setSelector(new LabelSelector(null, Map.of(LABEL, name)));
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.Script);
        UpgradeExecutor.Script script = new UpgradeExecutor.Script();
        UpgradeExecutor.ConfigMapKeyRef ref = new UpgradeExecutor.ConfigMapKeyRef();
        ref.setName(fullname + "-upgrade-scripts");
        ref.setKey("kubeadm");
        script.setConfigMapRef(ref);
        executor.setScript(script);
        spec.setExecutor(executor);
        spec.setPreflight(Preflight.Fail);
        spec.setReadyTimeoutSeconds(60);
        spec.setTimeoutSeconds(900);
        spec.getDrain().setTimeoutSeconds(180);
        upgrade.setSpec(spec);
        return upgrade;
    }

    /** Removes one node, preflight Fail. */
    static ScaleDown scaleDown(String operation, String node) {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName(operation);
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(List.of(node));
        spec.setPreflight(Preflight.Fail);
        spec.getDrain().setTimeoutSeconds(180);
        scaleDown.setSpec(spec);
        return scaleDown;
    }

    /** The nodes of the release's pods that are not being deleted. */
    List<String> placement() {
        return client.pods().inNamespace(namespace).withLabel("app.kubernetes.io/instance", name).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).map(p -> p.getSpec().getNodeName()).toList();
    }

    String holder() {
        var lease = client.leases().inNamespace(namespace).withName("cks-node-operator-leader").get();
        return lease == null ? null : lease.getSpec().getHolderIdentity();
    }

    /** The process of the pod on this node runs first (its kubelet started first) and takes the Lease; then every pod's. */
    String leaderOn(String node) {
        String first = pods.startOn(node);
        Awaitility.await("the operator pod on " + node + " leads").atMost(Duration.ofSeconds(90)).until(() -> first.equals(holder()));
        pods.follow();
        return first;
    }

    /** Creates the operation (removed on close) and waits until it ends as {@code ended} says. */
    <T extends CustomResource<?, ?>> T run(T operation, Predicate<T> ended) {
        operations.add(operation);
        client.resource(operation).create();
        @SuppressWarnings("unchecked")
        Class<T> kind = (Class<T>) operation.getClass();
        String name = operation.getMetadata().getName();
        try {
            Awaitility.await(kind.getSimpleName() + " " + name).atMost(OPERATION_TIME).pollInterval(Duration.ofSeconds(1)).until(() -> {
                T current = client.resources(kind).withName(name).get();
                return current != null && current.getStatus() != null && ended.test(current);
            });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(kind.getSimpleName() + " " + name + " did not end within " + OPERATION_TIME + ": " + diagnosis(operation), e);
        }
        return client.resources(kind).withName(name).get();
    }

    /** The operation's status, the operator's pods, processes and Lease holders, and the operation's events. */
    String diagnosis(CustomResource<?, ?> operation) {
        CustomResource<?, ?> current = client.resource(operation).get();
        return (current == null ? "(gone)" : client.getKubernetesSerialization().asYaml(current.getStatus())) + "\n" + pods.describe()
                + "\nevents:\n" + String.join("\n", bed.eventsOf(operation.getMetadata().getName()).stream()
                        .map(e -> e.getType() + " " + e.getReason() + ": " + e.getMessage()).toList());
    }

    /** Preflight's word on the operation: the operator's own pods (and nothing else here) predicted nothing. */
    static void assertPreflightFoundNothing(List<Condition> conditions) {
        assertThat(conditions).filteredOn(c -> c.getType().equals(PreflightGate.CONDITION)).singleElement().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getMessage()).as("what preflight said about the operator's own pods").isEqualTo("Preflight found nothing that would block the drain.");
        });
    }

    /** Schedulable, and no lock or cordon of ours left on it. */
    void assertReleased(String node) {
        Node current = client.nodes().withName(node).get();
        assertThat(current.getSpec().getUnschedulable()).as("%s left cordoned", node).isNotEqualTo(Boolean.TRUE);
        assertThat(current.getMetadata().getAnnotations()).as("node %s", node).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY);
    }

    /**
     * Every leader that evicted itself stopped as a stopped pod does (SIGTERM: neither halted for a lost Lease nor
     * killed after its grace period) and gave its Lease up; no process ever lost it; a process runs for each pod left.
     */
    void assertHandoversClean() throws Exception {
        pods.awaitSettled(Duration.ofSeconds(90));
        System.out.println("[" + name + "] " + pods.describe());
        List<String> holders = pods.holders();
        for (OperatorPods.Run run : pods.runs()) {
            String output = run.process().output();
            assertThat(output).as("%s never lost the Lease", run.pod()).doesNotContain("Lost the leader Lease");
            if (run.stopped() != null) {
                assertThat(run.exitStatus()).as("%s stopped by its SIGTERM", run.pod()).isNotIn(LeaderElection.LOST_LEASE_EXIT_STATUS, 137);
                if (holders.contains(run.pod())) {
                    assertThat(output).as("%s, a leader evicted, handed over", run.pod()).contains("Gave the leader Lease up on shutdown.");
                }
            }
        }
    }

    @Override
    public void close() {
        try {
            operations.forEach(operation -> client.resource(operation).delete());
            Awaitility.await("this test's operations deleted (the operator removes their finalizers)").atMost(Duration.ofSeconds(60))
                    .until(() -> operations.stream().allMatch(operation -> client.resource(operation).get() == null));
        } finally {
            pods.close();
            kubelets.close();
            bed.runTool("helm", "uninstall", name, "-n", namespace, "--wait");
            client.namespaces().withName(namespace).delete();
            cloudStack.close();
            nodes().forEach(node -> client.nodes().withName(node).delete());
        }
    }
}
