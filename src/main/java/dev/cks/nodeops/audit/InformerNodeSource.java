package dev.cks.nodeops.audit;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.cks.nodeops.common.Timestamps;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

/**
 * Reads Nodes from the JOSDK informer's cache, so an audit costs no API-server calls. An informer that
 * is not watching (RBAC missing, API server unreachable) may hold a stale list; then the Nodes count
 * as unreadable rather than risk reporting Nodes that came or went meanwhile.
 */
final class InformerNodeSource implements NodeSource {
    static final String NOT_WATCHING = "the operator's watch on Nodes is not healthy";

    private final BooleanSupplier watching;
    private final Supplier<Stream<Node>> cached;

    InformerNodeSource(BooleanSupplier watching, Supplier<Stream<Node>> cached) {
        this.watching = watching;
        this.cached = cached;
    }

    static InformerNodeSource of(InformerEventSource<Node, VMMapAudit> informer) {
        return new InformerNodeSource(() -> informer.getStatus() == Status.HEALTHY, () -> informer.list(node -> true));
    }

    @Override
    public ClusterNodes read() {
        if (!watching.getAsBoolean()) {
            return ClusterNodes.unavailable(NOT_WATCHING);
        }
        return ClusterNodes.of(cached.get()
                .map(node -> new NodeView(node.getMetadata().getName(), Timestamps.parse(node.getMetadata().getCreationTimestamp()),
                        kubeletVersion(node)))
                .toList());
    }

    /**
     * What the cache keeps of a Node: the audit needs name, age and kubelet version, the informer its
     * resourceVersion. Dropping the rest of status and spec makes thousands of Nodes cost kilobytes
     * instead of megabytes.
     */
    static Node nameAndCreation(Node node) {
        NodeBuilder pruned = new NodeBuilder().withNewMetadata()
                .withName(node.getMetadata().getName())
                .withCreationTimestamp(node.getMetadata().getCreationTimestamp())
                .withResourceVersion(node.getMetadata().getResourceVersion())
                .endMetadata();
        String kubelet = kubeletVersion(node);
        if (kubelet != null) {
            pruned.withNewStatus().withNewNodeInfo().withKubeletVersion(kubelet).endNodeInfo().endStatus();
        }
        return pruned.build();
    }

    private static String kubeletVersion(Node node) {
        return node.getStatus() == null || node.getStatus().getNodeInfo() == null ? null : node.getStatus().getNodeInfo().getKubeletVersion();
    }
}
