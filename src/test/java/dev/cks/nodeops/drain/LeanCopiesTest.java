package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * A lean copy gets the same verdicts and the same replacement placements as the pod as listed, for every field a
 * filter or the scheduling prediction reads; what no verdict reads is gone, and a workload's common parts are held once.
 */
class LeanCopiesTest {
    private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");

    /** Pods as the API server lists them: managed fields, kubectl's copy, env, a service account's volume, container statuses. */
    private static Pod listed(String name, String node, UnaryOperator<PodBuilder> shape) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace("shop").withUid("uid-" + name)
                .addToLabels("app", "web").addToLabels("pod-template-hash", "7f9c")
                .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{\"big\":\"copy\"}")
                .addNewManagedField().withManager("kube-controller-manager").withOperation("Update").endManagedField()
                .addNewOwnerReference().withKind("ReplicaSet").withName("web-7f9c").withController(true).withApiVersion("apps/v1").withUid("rs")
                .endOwnerReference().endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("app").withImage("web:1")
                .addNewEnv().withName("SECRET_SAUCE").withValue("x").endEnv()
                .withNewResources().addToRequests("cpu", new Quantity("500m")).addToRequests("memory", new Quantity("256Mi")).endResources()
                .endContainer()
                .addNewVolume().withName("kube-api-access-" + name).withNewProjected().endProjected().endVolume()
                .addNewToleration().withKey("node.kubernetes.io/not-ready").withOperator("Exists").withEffect("NoExecute").withTolerationSeconds(300L)
                .endToleration().endSpec()
                .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True").endCondition()
                .addNewContainerStatus().withName("app").withReady(true).endContainerStatus().endStatus();
        return shape.apply(pod).build();
    }

    private static List<Pod> everyKindOfPod() {
        return List.of(
                listed("web-1", "w-1", p -> p),
                listed("web-2", "w-1", p -> p),
                listed("bare", "w-1", p -> p.editMetadata().withOwnerReferences().endMetadata()),
                listed("mirror", "w-1", p -> p.editMetadata().withOwnerReferences().addToAnnotations("kubernetes.io/config.mirror", "x").endMetadata()),
                listed("agent", "w-1", p -> p.editMetadata().withOwnerReferences().addNewOwnerReference().withKind("DaemonSet").withName("agent")
                        .withController(true).withApiVersion("apps/v1").withUid("ds").endOwnerReference().endMetadata()),
                listed("cache", "w-2", p -> p.editSpec().addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume().endSpec()),
                listed("kept", "w-2", p -> p.editMetadata().addToAnnotations("nodeops.cks.dev/drain", "skip").endMetadata()),
                listed("stuck", "w-2", p -> p.editMetadata().withDeletionTimestamp("2026-12-03T09:00:00Z").withDeletionGracePeriodSeconds(30L)
                        .addToFinalizers("example.com/hold").endMetadata()),
                listed("done", "w-2", p -> p.editStatus().withPhase("Succeeded").endStatus()),
                listed("pinned", "w-3", p -> p.editSpec().addToNodeSelector("kubernetes.io/hostname", "w-3").endSpec()),
                listed("affine", "w-3", p -> p.editSpec().withNewAffinity().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                        .addNewNodeSelectorTerm().addNewMatchExpression().withKey("pool").withOperator("In").withValues("gpu").endMatchExpression()
                        .endNodeSelectorTerm().endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity()
                        .withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution().withTopologyKey("kubernetes.io/hostname")
                        .withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector().endRequiredDuringSchedulingIgnoredDuringExecution()
                        .endPodAntiAffinity().endAffinity().endSpec()),
                listed("spread", "w-3", p -> p.editSpec().addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("kubernetes.io/hostname")
                        .withWhenUnsatisfiable("DoNotSchedule").withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector()
                        .endTopologySpreadConstraint().endSpec()),
                hostPort("port-1", "w-1"), hostPort("port-2", "w-2"), hostPort("port-3", "w-3"),
                listed("sidecar", "w-3", p -> p.editSpec().addNewInitContainer().withName("proxy").withRestartPolicy("Always")
                        .withNewResources().addToRequests("cpu", new Quantity("3")).endResources().endInitContainer()
                        .addToOverhead("memory", new Quantity("64Mi")).endSpec()),
                listed("tolerant", "w-3", p -> p.editSpec().addNewToleration().withKey("dedicated").withOperator("Equal").withValue("gpu")
                        .withEffect("NoSchedule").endToleration().endSpec()));
    }

    /** On each worker, so that no replacement of these finds the port free. */
    private static Pod hostPort(String name, String node) {
        return listed(name, node, p -> p.editSpec().editFirstContainer().addNewPort().withContainerPort(80).withHostPort(8080).withProtocol("TCP")
                .endPort().endContainer().endSpec());
    }

    private static List<Node> nodes() {
        return List.of(capacity(TestNodes.node("w-1").label("pool", "a").build()), capacity(TestNodes.node("w-2").label("pool", "a").build()),
                capacity(TestNodes.node("w-3").label("pool", "a").build()),
                capacity(new NodeBuilder(TestNodes.node("g-1").label("pool", "gpu").build()).editSpec().addNewTaint().withKey("dedicated")
                        .withValue("gpu").withEffect("NoSchedule").endTaint().endSpec().build()));
    }

    private static Node capacity(Node node) {
        return new NodeBuilder(node).editOrNewStatus().addToAllocatable("cpu", new Quantity("4")).addToAllocatable("memory", new Quantity("8Gi"))
                .addToAllocatable("pods", new Quantity("110")).addNewImage().addToNames("registry.example/big:1").withSizeBytes(1L << 30).endImage()
                .endStatus().build();
    }

    @Test
    void aLeanCopyGetsTheSameVerdictsAndPlacementsAsThePodAsListed() {
        LeanCopies copies = new LeanCopies();
        List<Pod> full = everyKindOfPod();
        List<Pod> lean = full.stream().map(pod -> copies.pod(new PodBuilder(pod).build())).toList();
        List<Node> leanNodes = nodes().stream().map(LeanCopies::node).toList();
        DrainOptions strict = new DrainOptions();
        strict.setDeleteEmptyDirData(false);
        strict.setSkipWaitForDeleteTimeoutSeconds(60);
        DrainOptions forcing = new DrainOptions();
        forcing.setForce(true);
        forcing.setIgnoreDaemonSets(false);

        for (DrainOptions options : List.of(new DrainOptions(), strict, forcing)) {
            PodFilters filters = PodFilters.forOptions(options, NOW);
            List<String> names = List.of("w-1", "w-2", "w-3");
            var fullVerdicts = PreflightPrediction.verdicts(names, PreflightPrediction.podsByNode(full), filters);
            var leanVerdicts = PreflightPrediction.verdicts(names, PreflightPrediction.podsByNode(lean), filters);
            assertThat(byName(leanVerdicts)).isEqualTo(byName(fullVerdicts));
            for (Draining draining : Draining.values()) {
                var fullPlaces = PreflightPrediction.replacements(PreflightPrediction.evicted(fullVerdicts), draining, nodes(), full, PodFilters::name);
                var leanPlaces = PreflightPrediction.replacements(PreflightPrediction.evicted(leanVerdicts), draining, leanNodes, lean, PodFilters::name);
                assertThat(leanPlaces).isEqualTo(fullPlaces);
            }
        }
        for (int i = 0; i < full.size(); i++) {
            // What the scheduler reserves for each pod: sidecars, init containers and overhead included.
            assertThat(ReplacementPlacement.requests(lean.get(i))).isEqualTo(ReplacementPlacement.requests(full.get(i)));
        }
        // The cases reach what they are meant to reach: a refusal of each kind and a replacement with nowhere to go.
        var verdicts = byName(PreflightPrediction.verdicts(List.of("w-1", "w-2", "w-3"), PreflightPrediction.podsByNode(lean), PodFilters.forOptions(strict, NOW)));
        assertThat(verdicts.get("w-1").get("shop/bare").action()).isEqualTo(PodVerdict.Action.REFUSE);
        assertThat(verdicts.get("w-2").get("shop/cache").action()).isEqualTo(PodVerdict.Action.REFUSE);
        assertThat(PreflightPrediction.replacements(PreflightPrediction.evicted(PreflightPrediction.verdicts(List.of("w-3"),
                PreflightPrediction.podsByNode(lean), PodFilters.forOptions(new DrainOptions(), NOW))), Draining.ONE_AT_A_TIME, leanNodes, lean,
                PodFilters::name).byPod()).hasEntrySatisfying("shop/pinned", place -> assertThat(place).isInstanceOf(ReplacementPlacement.Nowhere.class))
                .hasEntrySatisfying("shop/port-3", place -> assertThat(place).isInstanceOf(ReplacementPlacement.Nowhere.class));
    }

    @Test
    void aLeanCopyDropsWhatNoVerdictReadsAndHoldsAWorkloadsCommonPartsOnce() {
        LeanCopies copies = new LeanCopies();
        Pod first = copies.pod(listed("web-1", "w-1", p -> p));
        Pod second = copies.pod(listed("web-2", "w-1", p -> p));

        assertThat(first.getMetadata().getManagedFields()).isNull();
        assertThat(first.getMetadata().getAnnotations()).isEmpty();
        assertThat(first.getSpec().getContainers().get(0).getEnv()).isEmpty();
        assertThat(first.getSpec().getContainers().get(0).getImage()).isNull();
        assertThat(first.getSpec().getVolumes()).isEmpty();
        assertThat(first.getStatus().getConditions()).isEmpty();
        assertThat(first.getStatus().getPhase()).isEqualTo("Running");
        assertThat(List.of(first.getMetadata().getName(), first.getMetadata().getUid(), second.getMetadata().getName()))
                .containsExactly("web-1", "uid-web-1", "web-2");
        assertThat(second.getMetadata().getLabels()).isSameAs(first.getMetadata().getLabels());
        assertThat(second.getMetadata().getOwnerReferences()).isSameAs(first.getMetadata().getOwnerReferences());
        assertThat(second.getSpec().getContainers()).isSameAs(first.getSpec().getContainers());
        assertThat(second.getSpec().getTolerations()).isSameAs(first.getSpec().getTolerations());
        assertThat(second.getStatus()).isSameAs(first.getStatus());

        Node node = LeanCopies.node(capacity(TestNodes.node("w-1").build()));
        assertThat(node.getStatus().getImages()).isNull();
        assertThat(node.getStatus().getAllocatable()).containsKey("cpu");
    }

    private static Map<String, Map<String, PodVerdict>> byName(Map<String, Map<Pod, PodVerdict>> verdicts) {
        Map<String, Map<String, PodVerdict>> byName = new LinkedHashMap<>();
        verdicts.forEach((node, pods) -> {
            Map<String, PodVerdict> named = new LinkedHashMap<>();
            pods.forEach((pod, verdict) -> named.put(PodFilters.name(pod), verdict));
            byName.put(node, named);
        });
        return byName;
    }
}
