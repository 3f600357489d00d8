package dev.cks.nodeops.nodes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * Tells waiting operations when a node becomes Ready at the wanted kubelet version, and listeners when
 * a node's readiness or version changes, from Node watch events: nothing polls. The event core
 * ({@link #nodeChanged}, {@link #nodeRemoved}) is plain Java so a JOSDK event source can feed it too.
 */
public final class NodeWatcher implements AutoCloseable {
    /** A change in what a node reports; fired only when readiness or kubelet version actually changed. */
    public record NodeChange(String node, NodeReadiness.State from, NodeReadiness.State to, String fromVersion, String toVersion) {
    }

    /** Completes a {@link #awaitReady} future when the node is deleted while someone waits for it. */
    public static final class NodeRemovedException extends RuntimeException {
        public NodeRemovedException(String node) {
            super("Node " + node + " was removed from the cluster while waiting for it to become Ready.");
        }
    }

    private record Wait(String wantedVersion, CompletableFuture<Node> ready) {
    }

    private final Map<String, List<Wait>> waits = new ConcurrentHashMap<>();
    private final Map<String, Node> lastSeen = new ConcurrentHashMap<>();
    private final List<java.util.function.Consumer<NodeChange>> listeners = new CopyOnWriteArrayList<>();
    private final Function<String, Node> current;
    private SharedIndexInformer<Node> informer;

    /** A watcher fed by a Fabric8 informer on all Nodes; call {@link #close()} to stop it. */
    public static NodeWatcher start(KubernetesClient client) {
        NodeWatcher watcher = new NodeWatcher(null);
        watcher.informer = client.nodes().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node node) {
                watcher.nodeChanged(node);
            }

            @Override
            public void onUpdate(Node oldNode, Node newNode) {
                watcher.nodeChanged(newNode);
            }

            @Override
            public void onDelete(Node node, boolean finalStateUnknown) {
                watcher.nodeRemoved(node.getMetadata().getName());
            }
        }, 0);
        return watcher;
    }

    /** @param current what the cache knows of a node now, for waits registered after its last event; may be null */
    public NodeWatcher(Function<String, Node> current) {
        this.current = current;
    }

    /**
     * Completes with the node once it is Ready and (when wantedVersion is not null) reports that kubelet
     * version; completes exceptionally with {@link NodeRemovedException} when the node is deleted.
     * The caller bounds the wait (e.g. {@code orTimeout}); NotReady on the way is normal during an upgrade.
     */
    public CompletableFuture<Node> awaitReady(String node, String wantedVersion) {
        Wait wait = new Wait(wantedVersion, new CompletableFuture<>());
        waits.computeIfAbsent(node, n -> new CopyOnWriteArrayList<>()).add(wait);
        wait.ready().whenComplete((n, e) -> waits.getOrDefault(node, List.of()).remove(wait));
        Node known = cached(node);
        if (known != null && satisfies(known, wait)) {
            wait.ready().complete(known);
        }
        return wait.ready();
    }

    public void addListener(java.util.function.Consumer<NodeChange> listener) {
        listeners.add(listener);
    }

    /** Feed an added or updated Node. */
    public void nodeChanged(Node node) {
        String name = node.getMetadata().getName();
        Node before = lastSeen.put(name, node);
        NodeReadiness.State from = before == null ? null : NodeReadiness.state(before);
        NodeReadiness.State to = NodeReadiness.state(node);
        String fromVersion = NodeReadiness.kubeletVersion(before);
        String toVersion = NodeReadiness.kubeletVersion(node);
        if (from != to || !Objects.equals(fromVersion, toVersion)) {
            NodeChange change = new NodeChange(name, from, to, fromVersion, toVersion);
            listeners.forEach(l -> l.accept(change));
        }
        for (Wait wait : new ArrayList<>(waits.getOrDefault(name, List.of()))) {
            if (satisfies(node, wait)) {
                wait.ready().complete(node);
            }
        }
    }

    public void nodeRemoved(String name) {
        Node before = lastSeen.remove(name);
        NodeChange change = new NodeChange(name, before == null ? null : NodeReadiness.state(before), NodeReadiness.State.REMOVED,
                NodeReadiness.kubeletVersion(before), null);
        listeners.forEach(l -> l.accept(change));
        List<Wait> pending = waits.remove(name);
        if (pending != null) {
            pending.forEach(w -> w.ready().completeExceptionally(new NodeRemovedException(name)));
        }
    }

    private Node cached(String name) {
        if (informer != null) {
            Node fromStore = informer.getStore().getByKey(name);
            if (fromStore != null) {
                return fromStore;
            }
        }
        Node seen = lastSeen.get(name);
        return seen != null || current == null ? seen : current.apply(name);
    }

    private static boolean satisfies(Node node, Wait wait) {
        return NodeReadiness.isReady(node)
                && (wait.wantedVersion() == null || VersionMatch.matches(NodeReadiness.kubeletVersion(node), wait.wantedVersion()));
    }

    @Override
    public void close() {
        if (informer != null) {
            informer.close();
        }
    }
}
