package dev.cks.nodeops.nodes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The watcher against real Node watch events. How a KWOK node is made NotReady here: the bed's KWOK
 * manages all nodes (`--manage-all-nodes`), and its node-initialize stage selects every node whose
 * Ready condition is not True and sets it back to True, keeping `status.nodeInfo.kubeletVersion` as
 * it finds it. Removing the `kwok.x-k8s.io/node` annotation does not stop that. So a status patch of
 * Ready=False (with a new kubeletVersion) is a real, short NotReady that KWOK ends within a second or
 * so: exactly the NotReady -> Ready sequence of a node restarted by an upgrade, seen by the watch.
 */
@ExtendWith(TestBedExtension.class)
class NodeWatcherIT {
    @Test
    void seesNotReadyThenReadyAtTheNewKubeletVersionPromptly(TestBed bed) throws Exception {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("nwt").getMetadata().getName();
        try (NodeWatcher watcher = NodeWatcher.start(client)) {
            List<NodeWatcher.NodeChange> changes = new CopyOnWriteArrayList<>();
            watcher.addListener(change -> {
                if (change.node().equals(node)) {
                    changes.add(change);
                }
            });
            CompletableFuture<Node> upgraded = watcher.awaitReady(node, "v1.35.9+vendor.1");
            CompletableFuture<Node> current = watcher.awaitReady(node, "1.35.4");
            assertThat(current.get(10, TimeUnit.SECONDS)).as("already Ready at that version: completes at once").isNotNull();
            assertThat(upgraded).as("Ready, but still at the old version").isNotDone();

            long patchedAt = System.nanoTime();
            client.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"status\":{\"nodeInfo\":{\"kubeletVersion\":\"v1.35.9\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
                            + "\"reason\":\"KubeletNotReady\",\"message\":\"restarting for an upgrade\","
                            + "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}");

            Node ready = upgraded.get(15, TimeUnit.SECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - patchedAt);
            assertThat(NodeReadiness.kubeletVersion(ready)).isEqualTo("v1.35.9");
            assertThat(NodeReadiness.isReady(ready)).isTrue();
            assertThat(took).as("event-driven, not a polling period").isLessThan(Duration.ofSeconds(10));
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> changes.stream().anyMatch(c -> c.to() == NodeReadiness.State.READY
                    && "v1.35.9".equals(c.toVersion())));
            assertThat(changes).as("the watch saw the node go NotReady at the new version, then Ready")
                    .anySatisfy(c -> {
                        assertThat(c.to()).isEqualTo(NodeReadiness.State.NOT_READY);
                        assertThat(c.toVersion()).isEqualTo("v1.35.9");
                    });
            int notReadyIndex = indexOf(changes, NodeReadiness.State.NOT_READY);
            int readyIndex = changes.size() - 1 - indexOf(reversed(changes), NodeReadiness.State.READY);
            assertThat(notReadyIndex).isLessThan(readyIndex);
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    @Test
    void aWaitEndsWhenTheNodeIsRemoved(TestBed bed) throws Exception {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("nwt").getMetadata().getName();
        try (NodeWatcher watcher = NodeWatcher.start(client)) {
            CompletableFuture<Node> never = watcher.awaitReady(node, "v1.36.0");
            client.nodes().withName(node).delete();
            assertThatThrownBy(() -> never.get(15, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(NodeWatcher.NodeRemovedException.class)
                    .hasMessageContaining("Node " + node + " was removed");
        }
    }

    private static int indexOf(List<NodeWatcher.NodeChange> changes, NodeReadiness.State state) {
        for (int i = 0; i < changes.size(); i++) {
            if (changes.get(i).to() == state) {
                return i;
            }
        }
        return -1;
    }

    private static List<NodeWatcher.NodeChange> reversed(List<NodeWatcher.NodeChange> changes) {
        List<NodeWatcher.NodeChange> copy = new java.util.ArrayList<>(changes);
        java.util.Collections.reverse(copy);
        return copy;
    }
}
