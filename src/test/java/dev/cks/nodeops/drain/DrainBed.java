package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.awaitility.Awaitility;

import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;

/**
 * Workloads on the test bed for drain tests: KWOK workers that only this test's pods can land on
 * (a node label the pods select), Deployments, DaemonSets, bare pods and PDBs, and a loop that
 * plays the reconciler by calling {@link NodeDrainer#step} when each step says the next is due.
 * Public for the operation ITs (ScaleDown, NodeUpgrade), which need the same workloads.
 */
public final class DrainBed {
    public static final String POOL_LABEL = "drain-test.nodeops.cks.dev/pool";

    final TestBed bed;
    final KubernetesClient client;
    public final String namespace;
    final List<String> nodes = new ArrayList<>();

    public DrainBed(TestBed bed, String prefix) {
        this.bed = bed;
        this.client = bed.client();
        this.namespace = bed.newNamespace(prefix);
    }

    /** A worker in this test's pool; pods of this test land only on the pool's workers. */
    String addWorker() {
        return addWorker("drn");
    }

    /** A worker of the given cluster prefix (`<cluster>-node-<hex>`) in this test's pool. */
    public String addWorker(String cluster) {
        Node node = bed.addWorker(cluster);
        String name = node.getMetadata().getName();
        client.nodes().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"" + POOL_LABEL + "\":\"" + namespace + "\"}}}");
        nodes.add(name);
        return name;
    }

    public PodSpec podSpec(boolean emptyDir) {
        PodSpecBuilder spec = new PodSpecBuilder()
                .withNodeSelector(Map.of(POOL_LABEL, namespace))
                .withTerminationGracePeriodSeconds(5L)
                .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer();
        if (emptyDir) {
            spec.addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume();
        }
        return spec.build();
    }

    public void deployment(String name, int replicas, boolean emptyDir) {
        create(name, replicas, podSpec(emptyDir));
    }

    private void create(String name, int replicas, PodSpec spec) {
        client.apps().deployments().inNamespace(namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withReplicas(replicas)
                .withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withSpec(spec).endTemplate()
                .endSpec().build()).create();
    }

    /** A Deployment with at most one pod more on any of the pool's workers than on another (a hard spread, not the scheduler's preference). */
    public void spreadDeployment(String name, int replicas) {
        PodSpec spec = new PodSpecBuilder(podSpec(false)).addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("kubernetes.io/hostname")
                .withWhenUnsatisfiable("DoNotSchedule").withNewLabelSelector().addToMatchLabels("app", name).endLabelSelector()
                .endTopologySpreadConstraint().build();
        create(name, replicas, spec);
    }

    /** A Deployment whose pods may run only on these nodes (required node affinity on their hostnames). */
    public void pinnedDeployment(String name, int replicas, List<String> pinnedTo) {
        PodSpec spec = new PodSpecBuilder(podSpec(false)).withNewAffinity().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm().addNewMatchExpression().withKey("kubernetes.io/hostname").withOperator("In").withValues(pinnedTo)
                .endMatchExpression().endNodeSelectorTerm().endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().endAffinity().build();
        create(name, replicas, spec);
    }

    void daemonSet(String name) {
        client.apps().daemonSets().inNamespace(namespace).resource(new DaemonSetBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withSpec(podSpec(false)).endTemplate()
                .endSpec().build()).create();
    }

    public Pod barePod(String name, String node, List<String> finalizers) {
        return client.pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withName(name).addToLabels("app", name).withFinalizers(finalizers).endMetadata()
                .withSpec(new PodSpecBuilder(podSpec(false)).withNodeName(node).build()).build()).create();
    }

    public void budget(String name, String app, Integer minAvailable, String maxUnavailable) {
        PodDisruptionBudgetBuilder pdb = new PodDisruptionBudgetBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", app).endSelector().endSpec();
        if (minAvailable != null) {
            pdb.editSpec().withMinAvailable(new IntOrString(minAvailable)).endSpec();
        } else {
            pdb.editSpec().withMaxUnavailable(maxUnavailable.endsWith("%") ? new IntOrString(maxUnavailable) : new IntOrString(Integer.parseInt(maxUnavailable))).endSpec();
        }
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(pdb.build()).create();
    }

    /** Waits until the disruption controller has computed the budget's numbers for all its pods. */
    public PodDisruptionBudget awaitBudget(String name, int expectedPods, int healthy) {
        Awaitility.await("PDB " + namespace + "/" + name + " has status for " + expectedPods + " pods").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(300)).until(() -> {
                    PodDisruptionBudget pdb = client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(name).get();
                    return pdb.getStatus() != null && pdb.getStatus().getExpectedPods() != null
                            && pdb.getStatus().getExpectedPods() == expectedPods && pdb.getStatus().getCurrentHealthy() == healthy
                            && pdb.getStatus().getObservedGeneration() != null
                            && pdb.getStatus().getObservedGeneration().equals(pdb.getMetadata().getGeneration());
                });
        return client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(name).get();
    }

    public List<Pod> podsOn(String node) {
        return client.pods().inNamespace(namespace).withField("spec.nodeName", node).list().getItems();
    }

    public void awaitReadyPods(String app, int count) {
        Awaitility.await(count + " ready pods of " + namespace + "/" + app).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300))
                .until(() -> client.pods().inNamespace(namespace).withLabel("app", app).list().getItems().stream()
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                        .filter(TestPods::isReady).count() == count);
    }

    public void cordon(String node) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":true}}");
    }

    /** Plays the reconciler: steps until the drain finishes or `limit` passes; sleeping is the caller's job, and this is the test. */
    static DrainResult drainToEnd(NodeDrainer drainer, String node, DrainOptions options, DrainState state, Instant deadline, Duration limit)
            throws InterruptedException {
        Instant giveUp = Instant.now().plus(limit);
        DrainResult result = drainer.step(node, options, state, deadline, Instant.now());
        while (!result.finished()) {
            assertThat(Instant.now()).as("the drain of %s finishes within %s; last report:\n%s", node, limit, result.report()).isBefore(giveUp);
            long waitMillis = Duration.between(Instant.now(), result.nextCheckAt()).toMillis();
            assertThat(waitMillis).as("a step never asks to wait past the attempt's end").isLessThan(60_000);
            if (waitMillis > 0) {
                TimeUnit.MILLISECONDS.sleep(waitMillis);
            }
            result = drainer.step(node, options, result.state(), deadline, Instant.now());
        }
        return result;
    }

    /** A client of the bed without retries of 429 (as the drain's own, see DrainClient) that shows each request it sends to {@code seen}. */
    KubernetesClient observedClient(Consumer<HttpRequest> seen) {
        return observedClient(client, seen);
    }

    static KubernetesClient observedClient(KubernetesClient of, Consumer<HttpRequest> seen) {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(of.getConfiguration()).withRequestRetryBackoffLimit(0).build())
                .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("observe", new Interceptor() {
                    @Override
                    public void before(BasicBuilder basic, HttpRequest request, RequestTags tags) {
                        seen.accept(request);
                    }
                })).build();
    }

    public void cleanUp() {
        client.namespaces().withName(namespace).delete();
        nodes.forEach(n -> client.nodes().withName(n).delete());
    }

    static DrainOptions options() {
        DrainOptions options = new DrainOptions();
        options.setTimeoutSeconds(60);
        options.setRetries(0);
        options.setRetryIntervalSeconds(1);
        return options;
    }
}
