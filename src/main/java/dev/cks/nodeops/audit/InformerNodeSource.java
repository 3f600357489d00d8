package dev.cks.nodeops.audit;

import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeCache;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Reads Nodes from the operator's Node cache ({@link NodeCache}). Before each audit it checks that the cache is current:
 * the informer must still be watching (not just synced once), and the operator must still be allowed to
 * list Nodes (one list of a single Node: an established watch outlives a revoked right for minutes, and
 * would then break). Otherwise the Nodes count as unreadable, with the API's answer as the reason,
 * rather than risk reporting Nodes that came or went meanwhile.
 */
final class InformerNodeSource implements NodeSource {
    static final String NOT_WATCHING = "the operator's watch on nodes is not running (it stopped and could not be started again)";

    private final BooleanSupplier watching;
    private final Supplier<Optional<String>> denied;
    private final Supplier<Stream<Node>> cached;

    /** @param denied why the operator may not list Nodes now (the API's answer), empty when it may */
    InformerNodeSource(BooleanSupplier watching, Supplier<Optional<String>> denied, Supplier<Stream<Node>> cached) {
        this.watching = watching;
        this.denied = denied;
        this.cached = cached;
    }

    static InformerNodeSource of(NodeCache cache, KubernetesClient client) {
        return new InformerNodeSource(cache::watching, () -> listDenied(client), cache::all);
    }

    /** One list of at most one Node: whether the operator may still read them, and if not, what the API server said. */
    static Optional<String> listDenied(KubernetesClient client) {
        try {
            client.nodes().list(new ListOptionsBuilder().withLimit(1L).build());
            return Optional.empty();
        } catch (KubernetesClientException e) {
            return Optional.of("listing nodes failed with HTTP " + e.getCode() + ": "
                    + (e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage()));
        }
    }

    @Override
    public ClusterNodes read() {
        Optional<String> refused = denied.get();
        if (refused.isPresent()) {
            return ClusterNodes.unavailable(refused.get());
        }
        if (!watching.getAsBoolean()) {
            return ClusterNodes.unavailable(NOT_WATCHING);
        }
        return ClusterNodes.of(cached.get()
                .map(node -> new NodeView(node.getMetadata().getName(), Timestamps.parse(node.getMetadata().getCreationTimestamp()),
                        kubeletVersion(node)))
                .toList());
    }

    private static String kubeletVersion(Node node) {
        return node.getStatus() == null || node.getStatus().getNodeInfo() == null ? null : node.getStatus().getNodeInfo().getKubeletVersion();
    }
}
