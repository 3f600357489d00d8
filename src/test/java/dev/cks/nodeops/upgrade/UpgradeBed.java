package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/** One test's KWOK nodes (a label the NodeUpgrade selects) and its NodeUpgrades, removed afterwards. */
final class UpgradeBed {
    static final String GROUP_LABEL = "nodeupgrade-it.nodeops.cks.dev/group";
    /** One minor behind the bed's API server, upgraded to its minor (v1.34.2 to v1.35.9 on the default bed). */
    static final String FROM = TestBed.kubernetesVersion(-1, 2);
    static final String TARGET = TestBed.kubernetesVersion(0, 9);

    final TestBed bed;
    final KubernetesClient client;
    final String group;
    final String prefix;
    final List<String> nodes = new ArrayList<>();
    private final List<String> upgrades = new ArrayList<>();

    UpgradeBed(TestBed bed, String prefix, String group) {
        this.bed = bed;
        this.client = bed.client();
        this.prefix = prefix;
        this.group = group;
    }

    String controlPlane(String version) {
        return add(true, version);
    }

    String worker(String version) {
        return add(false, version);
    }

    /** Two workers at the version, in the order an upgrade plans them (by creation time, then by name: made in the same second, by name). */
    List<String> twoWorkersInPlanOrder(String version) {
        return Stream.of(worker(version), worker(version))
                .sorted(Comparator.comparing((String n) -> node(n).getMetadata().getCreationTimestamp()).thenComparing(n -> n))
                .toList();
    }

    private String add(boolean controlPlane, String version) {
        Node node = bed.addNode(prefix, controlPlane, version);
        String name = node.getMetadata().getName();
        client.nodes().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"" + GROUP_LABEL + "\":\"" + group + "\"}}}");
        nodes.add(name);
        return name;
    }

    NodeUpgrade create(String name, UpgradeExecutor executor, java.util.function.Consumer<NodeUpgradeSpec> tweak) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName(name).build());
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setSelector(new LabelSelector(null, Map.of(GROUP_LABEL, group)));
        spec.setExecutor(executor);
        spec.setReadyTimeoutSeconds(60);
        spec.setTimeoutSeconds(600);
        spec.getDrain().setTimeoutSeconds(20);
        spec.getDrain().setRetries(0);
        spec.getDrain().setRetryIntervalSeconds(1);
        tweak.accept(spec);
        upgrade.setSpec(spec);
        upgrades.add(name);
        return client.resources(NodeUpgrade.class).resource(upgrade).create();
    }

    NodeUpgrade get(String name) {
        return client.resources(NodeUpgrade.class).withName(name).get();
    }

    NodeUpgrade await(String name, Duration atMost, Predicate<NodeUpgrade> condition) {
        try {
            Awaitility.await("NodeUpgrade " + name).atMost(atMost).pollInterval(Duration.ofMillis(300))
                    .until(() -> {
                        NodeUpgrade upgrade = get(name);
                        return upgrade != null && upgrade.getStatus() != null && condition.test(upgrade);
                    });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("NodeUpgrade " + name + ": not there within " + atMost + "; " + diagnosis(name), e);
        }
        return get(name);
    }

    /**
     * What a failed wait has to go on: the status (each node's phase and Job), the events, and the upgrade Jobs
     * with their pods as the API server has them (whether the bed ran a Job or the operator missed its end).
     */
    private String diagnosis(String name) {
        NodeUpgrade upgrade = get(name);
        NodeUpgradeStatus status = upgrade == null ? null : upgrade.getStatus();
        List<String> jobs = client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).list().getItems().stream()
                .map(job -> job.getMetadata().getName() + ": active " + job.getStatus().getActive() + ", succeeded " + job.getStatus().getSucceeded()
                        + ", failed " + job.getStatus().getFailed() + ", pods " + client.pods().inNamespace(TestBed.OPERATOR_NAMESPACE)
                                .withLabel("job-name", job.getMetadata().getName()).list().getItems().stream()
                                .map(pod -> pod.getMetadata().getName() + " " + pod.getStatus().getPhase() + " on " + pod.getSpec().getNodeName()).toList())
                .toList();
        return (status == null ? "(no status)" : "phase " + status.getPhase() + ", nodes " + status.getNodes().stream()
                .map(n -> n.getName() + " " + n.getPhase() + " (job " + n.getJobName() + ", step since " + n.getStepStartedAt() + ")").toList() + ", conditions " + status.getConditions())
                + "\nevents:\n" + String.join("\n", bed.eventsOf(name).stream().map(e -> e.getType() + " " + e.getReason() + ": " + e.getMessage()).toList())
                + "\nupgrade Jobs:\n" + String.join("\n", jobs);
    }

    static Predicate<NodeUpgrade> phase(NodeUpgradeStatus.Phase phase) {
        return u -> u.getStatus().getPhase() == phase;
    }

    static UpgradeNodeStatus nodeStatus(NodeUpgrade upgrade, String node) {
        return upgrade.getStatus().getNodes().stream().filter(n -> n.getName().equals(node)).findFirst().orElseThrow();
    }

    Node node(String name) {
        return client.nodes().withName(name).get();
    }

    void assertReleased(String name, boolean unschedulable) {
        Node node = node(name);
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        assertThat(annotations).as("node %s", name).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY);
        assertThat(Boolean.TRUE.equals(node.getSpec().getUnschedulable())).as("node %s unschedulable", name).isEqualTo(unschedulable);
    }

    void cordonByHand(String name) {
        client.nodes().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":true}}");
    }

    /** Events the operator recorded on a NodeUpgrade (they live in the default namespace). */
    List<io.fabric8.kubernetes.api.model.Event> events(String nodeUpgrade) {
        return bed.eventsOf(nodeUpgrade);
    }

    /**
     * Two pods on the node, covered by a PDB that allows no disruption: a drain of that node is blocked
     * until the PDB goes. Pods select the node by a label only it has, so they land nowhere else.
     */
    void podsBlockedByABudget(String node, String namespace) {
        podsPinnedTo(node, namespace);
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("web-pdb").endMetadata()
                .withNewSpec().withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(2)).withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .build()).create();
        Awaitility.await("PDB " + namespace + "/web-pdb counts 2 healthy pods").atMost(Duration.ofSeconds(90)).until(() -> {
            var pdb = client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").get();
            return pdb.getStatus() != null && pdb.getStatus().getCurrentHealthy() != null && pdb.getStatus().getCurrentHealthy() == 2
                    && pdb.getStatus().getExpectedPods() == 2;
        });
    }

    /**
     * Two pods of Deployment {@code web} running on the node, so a drain of it evicts something. They select the node by a
     * label only it has, so they land nowhere else (their replacements wait while it is cordoned).
     */
    void podsPinnedTo(String node, String namespace) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"nu-it-pool\":\"" + namespace + "\"}}}");
        client.apps().deployments().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withReplicas(2).withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().withNodeSelector(Map.of("nu-it-pool", namespace)).withTerminationGracePeriodSeconds(1L)
                .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
        Awaitility.await("2 pods of " + namespace + "/web running on " + node).atMost(Duration.ofSeconds(90)).until(() ->
                client.pods().inNamespace(namespace).withLabel("app", "web").list().getItems().stream()
                        .filter(pod -> node.equals(pod.getSpec().getNodeName()) && "Running".equals(pod.getStatus().getPhase())).count() == 2);
    }

    static UpgradeExecutor script(String configMap, String key) {
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.Script);
        UpgradeExecutor.Script script = new UpgradeExecutor.Script();
        UpgradeExecutor.ConfigMapKeyRef ref = new UpgradeExecutor.ConfigMapKeyRef();
        ref.setName(configMap);
        ref.setKey(key);
        script.setConfigMapRef(ref);
        executor.setScript(script);
        return executor;
    }

    /** Deletes this test's NodeUpgrades (the operator's cleanup runs on their finalizer) and nodes. */
    void cleanUp() {
        try {
            for (String name : upgrades) {
                client.resources(NodeUpgrade.class).withName(name).delete();
            }
            for (String name : upgrades) {
                Awaitility.await("NodeUpgrade " + name + " deleted (the operator removes its finalizer)").atMost(Duration.ofSeconds(60))
                        .until(() -> get(name) == null);
            }
        } finally {
            // Nodes go in any case: a node left at the target would count as "control plane upgraded" for later tests.
            nodes.forEach(n -> client.nodes().withName(n).delete());
        }
    }
}
