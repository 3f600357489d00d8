package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.nodes.NodeWakeups;
import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.Node;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

/** What a Node event from the cache turns into: wake-ups of the upgrades it concerns, and none for noise. */
class NodeWakeupsTest {
    private final List<ResourceID> woken = new ArrayList<>();
    private NodeWakeups<NodeUpgrade> wakeups;

    @BeforeEach
    void wakeups() {
        // The cache itself is not used by the event handling; start, stop and health go to it.
        wakeups = UpgradeEventSources.nodeWakeups(null, () -> Stream.of(UpgradeEventSourcesTest.upgrade("a", "w1"), UpgradeEventSourcesTest.upgrade("b", "w2,w3")), Duration.ZERO);
        wakeups.setEventHandler(event -> woken.add(event.getRelatedCustomResourceID()));
    }

    @Test
    void aHeartbeatWakesNobodyAndAChangeAnUpgradeActsOnWakesOnlyTheUpgradeWorkingOnTheNode() {
        Node cached = NodeCache.pruned(TestNodes.node("w3").version("v1.34.2").build());

        wakeups.onUpdate(cached, TestNodes.node("w3").version("v1.34.2").annotation("node.alpha.kubernetes.io/ttl", "5").build());
        assertThat(woken).as("a heartbeat").isEmpty();

        wakeups.onUpdate(cached, TestNodes.node("w3").version("v1.35.4").build());
        assertThat(woken).containsExactly(new ResourceID("b"));
    }

    @Test
    void aNodeAddedOrDeletedWakesTheUpgradeHoldingItAndNoneForANodeNobodyWorksOn() {
        wakeups.onAdd(NodeCache.pruned(TestNodes.node("w9").lockedBy("NodeUpgrade/a").build()));
        wakeups.onDelete(TestNodes.node("w1").build(), false);
        wakeups.onAdd(TestNodes.node("w7").build());

        assertThat(woken).containsExactly(new ResourceID("a"), new ResourceID("a"));
    }
}
