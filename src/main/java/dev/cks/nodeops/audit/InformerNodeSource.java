package dev.cks.nodeops.audit;

import dev.cks.nodeops.common.Timestamps;
import io.fabric8.kubernetes.api.model.Node;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

/**
 * Reads Nodes from the JOSDK informer's cache, so an audit costs no API-server calls. An informer that
 * is not watching (RBAC missing, API server unreachable) may hold a stale list; then the Nodes count
 * as unreadable rather than risk reporting Nodes that came or went meanwhile.
 */
final class InformerNodeSource implements NodeSource {
    private final InformerEventSource<Node, VMMapAudit> informer;

    InformerNodeSource(InformerEventSource<Node, VMMapAudit> informer) {
        this.informer = informer;
    }

    @Override
    public ClusterNodes read() {
        if (informer.getStatus() != Status.HEALTHY) {
            return ClusterNodes.unavailable("the operator's watch on Nodes is not healthy, so node findings were not checked");
        }
        return ClusterNodes.of(informer.list(node -> true)
                .map(node -> new NodeView(node.getMetadata().getName(), Timestamps.parse(node.getMetadata().getCreationTimestamp())))
                .toList());
    }
}
