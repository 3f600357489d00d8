package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.awaitility.Awaitility;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Hundreds of KWOK nodes and thousands of pods at once, and NodeUpgrades of a pool of them: the bed of the scale
 * benchmark ({@link BenchmarkScaleIT}) and of the status-size tests ({@link StatusSizeRun}). Nodes carry {@link #POOL}.
 */
public final class ScaleBed {
    public static final String POOL = "scale-bench.nodeops.cks.dev/pool";

    private final KubernetesClient client;
    private final String nodeTemplate;

    public ScaleBed(TestBed bed) {
        this.client = bed.client();
        this.nodeTemplate = bed.testbed(Duration.ofMinutes(1), "node-manifest", "__SCALE_NODE__", "node", "__SCALE_VERSION__");
    }

    /** KWOK workers at the version with the labels, created 8 at a time; returns their names. */
    public List<String> createNodes(int count, String version, Map<String, String> labels) throws Exception {
        List<String> names = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> created = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                String name = TestBed.CLUSTER + "-node-" + String.format("%010x", (System.nanoTime() ^ ((long) names.size() << 40)) & 0xffffffffffL);
                names.add(name);
                Node node = client.getKubernetesSerialization().unmarshal(
                        nodeTemplate.replace("__SCALE_NODE__", name).replace("__SCALE_VERSION__", version), Node.class);
                node.getMetadata().getLabels().putAll(labels);
                created.add(pool.submit(() -> withRetries(() -> client.nodes().resource(node).create())));
            }
            for (Future<?> f : created) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        return names;
    }

    /** Until every node of the bed is Ready (KWOK's node-initialize stage). */
    void awaitReadyNodes() {
        Awaitility.await("every node Ready").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(3))
                .until(() -> ListPages.all(client.nodes()).stream().allMatch(TestBed::isReady));
    }

    /** Until these nodes are Ready: for a bed other tests share, where some of theirs may be NotReady on purpose. */
    public void awaitReady(List<String> names) {
        Set<String> wanted = new HashSet<>(names);
        Awaitility.await(names.size() + " nodes Ready").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(3))
                .until(() -> ListPages.all(client.nodes()).stream().filter(n -> wanted.contains(n.getMetadata().getName()) && TestBed.isReady(n))
                        .count() == wanted.size());
    }

    /**
     * Pods no controller manages, bound to the nodes by name in turn (no scheduler round-trip: this 2-core bed would
     * spend minutes on 10,000), named prefix + index from {@code first}, 16 created at a time.
     */
    void bindPods(String namespace, String prefix, List<String> nodes, int first, int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> created = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int n = first + i;
                Pod pod = new PodBuilder().withNewMetadata().withName(prefix + n).addToLabels("app", prefix.replaceAll("-$", "")).endMetadata()
                        .withNewSpec().withNodeName(nodes.get(n % nodes.size())).withTerminationGracePeriodSeconds(1L)
                        .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec().build();
                created.add(pool.submit(() -> withRetries(() -> client.pods().inNamespace(namespace).resource(pod).create())));
            }
            for (Future<?> f : created) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    /** A Deployment whose pods go to the pool's nodes, with a PodDisruptionBudget of maxUnavailable 10 %. */
    void deployment(String namespace, String app, int replicas, String pool) {
        client.apps().deployments().inNamespace(namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName(app).endMetadata()
                .withNewSpec().withReplicas(replicas).withNewSelector().addToMatchLabels("app", app).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", app).endMetadata()
                .withNewSpec().withNodeSelector(Map.of(POOL, pool)).withTerminationGracePeriodSeconds(1L)
                .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName(app).endMetadata()
                .withNewSpec().withMaxUnavailable(new IntOrString("10%")).withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
                .build()).create();
    }

    /** A NodeUpgrade of the pool's nodes to {@link UpgradeBed#TARGET} with the Script executor (the script's key: upgrade.sh). */
    NodeUpgrade createUpgrade(String name, String pool, String scriptConfigMap, int maxUnavailable, int drainTimeoutSeconds,
            java.util.function.Consumer<NodeUpgradeSpec> tweak) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName(name).build());
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(UpgradeBed.TARGET);
        spec.setSelector(new LabelSelector(null, Map.of(POOL, pool)));
        spec.setExecutor(UpgradeBed.script(scriptConfigMap, "upgrade.sh"));
        spec.setMaxUnavailable(new IntOrString(maxUnavailable));
        spec.setReadyTimeoutSeconds(3600);
        spec.setTimeoutSeconds(7200);
        spec.getDrain().setTimeoutSeconds(drainTimeoutSeconds);
        tweak.accept(spec);
        upgrade.setSpec(spec);
        return client.resources(NodeUpgrade.class).resource(upgrade).create();
    }

    /** Retries what a loaded API server refuses for now (429, 5xx, no answer); a 409 means an earlier attempt made it. */
    public static void withRetries(Runnable call) {
        for (int attempt = 1; ; attempt++) {
            try {
                call.run();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409) {
                    return; // created by an earlier attempt whose answer was lost
                }
                if (attempt == 5 || (e.getCode() != 429 && e.getCode() < 500 && e.getCode() != 0)) {
                    throw e;
                }
                try {
                    Thread.sleep(500L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }
}
