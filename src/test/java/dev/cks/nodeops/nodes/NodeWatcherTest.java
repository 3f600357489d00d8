package dev.cks.nodeops.nodes;

import static dev.cks.nodeops.nodes.NodeReadinessTest.node;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;

/** The watcher's event core, fed by hand as the informer would feed it. */
class NodeWatcherTest {
    @Test
    void aWaitCompletesWhenTheNodeIsReadyAtTheWantedVersion() {
        NodeWatcher watcher = new NodeWatcher(name -> null);
        CompletableFuture<Node> wait = watcher.awaitReady("w-1", "1.35.5");
        watcher.nodeChanged(node("w-1", "True", "v1.35.4"));
        assertThat(wait).isNotDone();
        watcher.nodeChanged(node("w-1", "False", "v1.35.5"));
        assertThat(wait).isNotDone();
        watcher.nodeChanged(node("w-2", "True", "v1.35.5"));
        assertThat(wait).as("another node").isNotDone();
        watcher.nodeChanged(node("w-1", "True", "v1.35.5+vendor.2"));
        assertThat(wait).isCompleted();
    }

    @Test
    void aNodeAlreadyReadyCompletesTheWaitAtOnce() {
        NodeWatcher watcher = new NodeWatcher(name -> node(name, "True", "v1.35.4"));
        assertThat(watcher.awaitReady("w-1", "v1.35.4")).isCompleted();
        assertThat(watcher.awaitReady("w-1", null)).as("any version").isCompleted();
        assertThat(watcher.awaitReady("w-1", "v1.35.40")).isNotDone();
    }

    @Test
    void listenersHearOnlyRealChanges() {
        NodeWatcher watcher = new NodeWatcher(name -> null);
        List<NodeWatcher.NodeChange> changes = new ArrayList<>();
        watcher.addListener(changes::add);
        watcher.nodeChanged(node("w-1", "True", "v1.35.4"));
        watcher.nodeChanged(node("w-1", "True", "v1.35.4"));
        watcher.nodeChanged(node("w-1", "False", "v1.35.4"));
        watcher.nodeChanged(node("w-1", "True", "v1.35.5"));
        watcher.nodeRemoved("w-1");
        assertThat(changes).extracting(NodeWatcher.NodeChange::to).containsExactly(NodeReadiness.State.READY, NodeReadiness.State.NOT_READY,
                NodeReadiness.State.READY, NodeReadiness.State.REMOVED);
        assertThat(changes.get(2).fromVersion()).isEqualTo("v1.35.4");
        assertThat(changes.get(2).toVersion()).isEqualTo("v1.35.5");
    }

    @Test
    void removalEndsTheWaitWithAnError() {
        NodeWatcher watcher = new NodeWatcher(name -> null);
        CompletableFuture<Node> wait = watcher.awaitReady("w-1", "1.35.5");
        watcher.nodeRemoved("w-1");
        assertThat(wait).isCompletedExceptionally();
        org.assertj.core.api.Assertions.assertThatThrownBy(wait::join).hasCauseInstanceOf(NodeWatcher.NodeRemovedException.class)
                .hasMessageContaining("Node w-1 was removed");
    }
}
