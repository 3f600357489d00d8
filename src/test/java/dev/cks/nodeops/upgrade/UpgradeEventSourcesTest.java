package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

class UpgradeEventSourcesTest {
    /** An upgrade under way on currentNode (comma-separated when several go at once). */
    static NodeUpgrade upgrade(String name, String currentNode) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName(name).build());
        upgrade.setStatus(new NodeUpgradeStatus());
        upgrade.getStatus().setCurrentNode(currentNode);
        return upgrade;
    }

    /** Actor: CKS scaling the cluster in, or a person deleting or relabelling the node the ISO canary runs on (Pending there). */
    @Test
    void aChangeOfTheNodeTheIsoCanaryRunsOnWakesItsUpgradeUntilTheCanaryIsOver() {
        NodeUpgrade checking = upgrade("a", null);
        checking.getStatus().setIsoCanary(new IsoCanaryStatus("w1", "v1.35.4"));

        assertThat(UpgradeEventSources.concerned(TestNodes.node("w1").build(), Stream.of(checking, upgrade("b", "w2")))).containsExactly(new ResourceID("a"));
        checking.getStatus().getIsoCanary().setCompletedAt("2026-11-30T12:00:00Z");
        assertThat(UpgradeEventSources.concerned(TestNodes.node("w1").build(), Stream.of(checking))).as("a canary over concerns no node").isEmpty();
    }

    @Test
    void aNodesChangeWakesOnlyTheUpgradeHoldingItOrWorkingOnIt() {
        Node held = TestNodes.node("w1").lockedBy("NodeUpgrade/a").build();
        Node waitedFor = TestNodes.node("w2").lockedBy("ScaleDown/other").build();
        Node nobodys = TestNodes.node("w3").build();
        Stream<NodeUpgrade> underWay = Stream.of(upgrade("a", "w1"), upgrade("b", "w2"), upgrade("c", "w9"));

        assertThat(UpgradeEventSources.concerned(held, Stream.of(upgrade("a", "w1"), upgrade("b", "w2"), upgrade("c", "w9"))))
                .containsExactly(new ResourceID("a"));
        assertThat(UpgradeEventSources.concerned(waitedFor, underWay)).as("b waits for w2's lock").containsExactly(new ResourceID("b"));
        assertThat(UpgradeEventSources.concerned(nobodys, Stream.of(upgrade("a", "w1"), upgrade("c", "w9")))).isEmpty();
    }

    @Test
    void onlyChangesAnUpgradeActsOnCountAndAPrunedNodeSaysTheSameAsTheFullOne() {
        Node full = TestNodes.node("w1").version("v1.34.2").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z1")
                .annotation("node.alpha.kubernetes.io/ttl", "0").build();
        Node pruned = NodeCache.pruned(full);

        assertThat(UpgradeEventSources.NodeWake.of(pruned)).isEqualTo(UpgradeEventSources.NodeWake.of(full));
        assertThat(pruned.getMetadata().getLabels()).as("a Continuous NodeUpgrade's selector reads them").isEqualTo(full.getMetadata().getLabels());
        assertThat(pruned.getMetadata().getAnnotations()).containsOnlyKeys("nodeops.cks.dev/locked-by");

        Node heartbeat = TestNodes.node("w1").version("v1.34.2").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z1")
                .annotation("node.alpha.kubernetes.io/ttl", "5").build();
        Node upgraded = TestNodes.node("w1").version("v1.35.4").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z1").build();
        Node notReady = TestNodes.node("w1").version("v1.34.2").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z1").ready(false).build();
        Node released = TestNodes.node("w1").version("v1.34.2").label("topology.kubernetes.io/zone", "z1").build();
        Node relabelled = TestNodes.node("w1").version("v1.34.2").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z2").build();
        Node optedOut = TestNodes.node("w1").version("v1.34.2").lockedBy("NodeUpgrade/a").label("topology.kubernetes.io/zone", "z1")
                .annotation(dev.cks.nodeops.common.NodeAnnotations.EXCLUDE, "true").build();
        assertThat(UpgradeEventSources.NodeWake.of(heartbeat)).isEqualTo(UpgradeEventSources.NodeWake.of(full));
        assertThat(UpgradeEventSources.NodeWake.of(NodeCache.pruned(optedOut))).isEqualTo(UpgradeEventSources.NodeWake.of(optedOut));
        assertThat(Stream.of(upgraded, notReady, released, relabelled, optedOut).map(UpgradeEventSources.NodeWake::of))
                .allSatisfy(wake -> assertThat(wake).isNotEqualTo(UpgradeEventSources.NodeWake.of(full)));
    }
    /** The rollout counts unavailable nodes from the Node cache (pruned Nodes): it must count as it would on the full ones. */
    @Test
    void theRolloutCountsAPrunedNodeAsTheFullOne() {
        String owner = "NodeUpgrade/a/uid-a";
        List<Node> nodes = List.of(
                TestNodes.node("ready").label("topology.kubernetes.io/zone", "z1").build(),
                TestNodes.node("not-ready").ready(false).build(),
                TestNodes.node("cordoned-by-us").unschedulable().annotation(NodeAnnotations.CORDONED_BY, owner).lockedBy(owner).build(),
                TestNodes.node("cordoned-by-another").unschedulable().annotation(NodeAnnotations.CORDONED_BY, "ScaleDown/b/uid-b").build(),
                TestNodes.node("cordoned-by-hand").unschedulable().build());

        for (Node node : nodes) {
            Node pruned = NodeCache.pruned(node);
            assertThat(UpgradeRollout.isUnavailable(pruned, owner)).as(node.getMetadata().getName())
                    .isEqualTo(UpgradeRollout.isUnavailable(node, owner));
        }
        assertThat(nodes.stream().map(node -> UpgradeRollout.isUnavailable(NodeCache.pruned(node), owner)))
                .containsExactly(false, true, false, true, true);
    }
}
