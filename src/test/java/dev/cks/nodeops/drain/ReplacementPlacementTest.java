package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.ReplacementPlacement.Nowhere;
import dev.cks.nodeops.drain.ReplacementPlacement.Placed;
import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;

/** The scheduler's filters as the preflight replays them: each misfit in the scheduler's words. */
class ReplacementPlacementTest {
    private final List<Node> nodes = new ArrayList<>();
    private final List<Pod> pods = new ArrayList<>();

    private Node node(String name, String zone) {
        Node node = new NodeBuilder(TestNodes.node(name).label("zone", zone).build()).editStatus()
                .addToAllocatable("cpu", new Quantity("2")).addToAllocatable("memory", new Quantity("4Gi")).addToAllocatable("pods", new Quantity("10"))
                .endStatus().build();
        nodes.add(node);
        return node;
    }

    private static PodBuilder pod(String name, String node, String app) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).addToLabels("app", app)
                .addNewOwnerReference().withKind("ReplicaSet").withName(app + "-7d9").withController(true).endOwnerReference().endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("app").withNewResources().addToRequests("cpu", new Quantity("500m"))
                .endResources().endContainer().endSpec().withNewStatus().withPhase("Running").endStatus();
    }

    private Pod add(Pod pod) {
        pods.add(pod);
        return pod;
    }

    private ReplacementPlacement.Verdict place(Pod evicted, String... leaving) {
        return ReplacementPlacement.place(List.of(evicted), Set.of(leaving), nodes, pods).get("shop/" + evicted.getMetadata().getName());
    }

    @Test
    void aPodPinnedByNodeAffinityToTheDrainedNodesHasNowhereToGo() {
        node("w-1", "a");
        node("w-2", "a");
        node("w-3", "a");
        Pod web = add(pod("web-1", "w-1", "web").editSpec().withNewAffinity().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm().addNewMatchExpression().withKey("kubernetes.io/hostname").withOperator("In").withValues("w-1", "w-2")
                .endMatchExpression().endNodeSelectorTerm().endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().endAffinity().endSpec().build());

        assertThat(place(web, "w-1", "w-2")).isEqualTo(new Nowhere("0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                + "2 node(s) are being drained"));
        assertThat(place(web, "w-1")).isEqualTo(new Placed("w-2"));
    }

    @Test
    void taintsNeedATolerationCordonedAndNotReadyNodesTakeNothing() {
        Node control = node("cp-1", "a");
        control.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder().withKey("node-role.kubernetes.io/control-plane")
                .withEffect("NoSchedule").build()));
        nodes.add(TestNodes.node("w-2").unschedulable().build());
        nodes.add(TestNodes.node("w-3").ready(false).build());
        Pod web = add(pod("web-1", "w-1", "web").build());

        assertThat(place(web, "w-1")).isEqualTo(new Nowhere("0/3 nodes are available: 1 node(s) had untolerated taint "
                + "{node-role.kubernetes.io/control-plane: }, 1 node(s) were not ready, 1 node(s) were unschedulable"));

        Pod tolerant = pod("agent-1", "w-1", "agent").editSpec().addNewToleration().withKey("node-role.kubernetes.io/control-plane")
                .withOperator("Exists").withEffect("NoSchedule").endToleration().endSpec().build();
        assertThat(place(tolerant, "w-1")).isEqualTo(new Placed("cp-1"));
    }

    @Test
    void requestsMustFitWhatIsLeftOfAllocatableAndEachReplacementTakesItsRoom() {
        node("w-1", "a");
        node("w-2", "a");
        add(pod("big", "w-2", "big").editSpec().editFirstContainer().editResources().addToRequests("cpu", new Quantity("1200m")).endResources()
                .endContainer().endSpec().build());
        Pod first = add(pod("web-1", "w-1", "web").build());
        Pod second = add(pod("web-2", "w-1", "web").build());

        Map<String, ReplacementPlacement.Verdict> placed = ReplacementPlacement.place(List.of(first, second), Set.of("w-1"), nodes, pods);

        assertThat(placed.get("shop/web-1")).as("1.2 of 2 cpu used: room for one more 500m").isEqualTo(new Placed("w-2"));
        assertThat(placed.get("shop/web-2")).isEqualTo(new Nowhere("0/2 nodes are available: 1 Insufficient cpu, 1 node(s) are being drained"));
    }

    @Test
    void requiredAntiAffinityKeepsReplicasApartBothWays() {
        node("w-1", "a");
        node("w-2", "b");
        node("w-3", "b");
        PodBuilder spread = pod("db-1", "w-1", "db").editSpec().withNewAffinity().withNewPodAntiAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withTopologyKey("zone").withNewLabelSelector().addToMatchLabels("app", "db").endLabelSelector()
                .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAntiAffinity().endAffinity().endSpec();
        Pod evicted = add(spread.build());
        add(new PodBuilder(spread.build()).editMetadata().withName("db-2").endMetadata().editSpec().withNodeName("w-2").endSpec().build());

        assertThat(place(evicted, "w-1")).isEqualTo(new Nowhere("0/3 nodes are available: 1 node(s) are being drained, "
                + "2 node(s) didn't match pod anti-affinity rules"));

        Pod plainDb = pod("db-3", "w-1", "db").build();
        assertThat(place(plainDb, "w-1")).as("db-2's own anti-affinity keeps another db pod out of zone b")
                .isEqualTo(new Nowhere("0/3 nodes are available: 1 node(s) are being drained, 2 node(s) didn't match pod anti-affinity rules"));
    }

    @Test
    void requiredPodAffinityNeedsAMatchingPodInTheDomain() {
        node("w-1", "a");
        node("w-2", "b");
        node("w-3", "a");
        add(pod("cache-1", "w-2", "cache").build());
        Pod web = add(pod("web-1", "w-1", "web").editSpec().withNewAffinity().withNewPodAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withTopologyKey("zone").withNewLabelSelector().addToMatchLabels("app", "cache").endLabelSelector()
                .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAffinity().endAffinity().endSpec().build());

        assertThat(place(web, "w-1")).isEqualTo(new Placed("w-2"));
    }

    @Test
    void topologySpreadWithDoNotScheduleRefusesTooMuchSkew() {
        node("w-1", "a");
        node("w-2", "b");
        node("w-3", "b");
        add(pod("web-2", "w-2", "web").build());
        Pod web = add(pod("web-1", "w-1", "web").editSpec().addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("zone")
                .withWhenUnsatisfiable("DoNotSchedule").withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector()
                .endTopologySpreadConstraint().endSpec().build());
        add(pod("web-3", "w-3", "web").build());

        // Zone a would have 0 once web-1 is gone and zone b has 2: placing in b makes a skew of 3.
        assertThat(place(web, "w-1")).isEqualTo(new Nowhere("0/3 nodes are available: 1 node(s) are being drained, "
                + "2 node(s) didn't match pod topology spread constraints"));
    }

    @Test
    void hostPortsMustBeFree() {
        node("w-1", "a");
        node("w-2", "a");
        add(pod("proxy-2", "w-2", "proxy").editSpec().editFirstContainer().addNewPort().withContainerPort(80).withHostPort(80).endPort()
                .endContainer().endSpec().build());
        Pod proxy = add(pod("proxy-1", "w-1", "proxy").editSpec().editFirstContainer().addNewPort().withContainerPort(80).withHostPort(80).endPort()
                .endContainer().endSpec().build());

        assertThat(place(proxy, "w-1")).isEqualTo(new Nowhere("0/2 nodes are available: 1 node(s) are being drained, "
                + "1 node(s) didn't have free ports for the requested pod ports"));
    }

    @Test
    void aPodWithoutAControllerGetsNoReplacement() {
        node("w-1", "a");
        node("w-2", "a");
        Pod solo = add(new PodBuilder(pod("solo", "w-1", "solo").build()).editMetadata().withOwnerReferences().endMetadata().build());

        assertThat(place(solo, "w-1")).isEqualTo(new Nowhere("no controller makes a replacement of this pod"));
    }
}
