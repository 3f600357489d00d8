package dev.cks.nodeops.nodes;

import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import jakarta.inject.Singleton;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSystemInfoBuilder;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

/**
 * The operator's one cache of the cluster's Nodes. The NodeUpgrade controller owns the Node informer (its
 * events wake upgrades); the VMMapAudit controller reads the same cache. One informer instead of one per
 * controller means one first list of every Node at start-up, one watch and one copy: beside 1,000 Nodes the
 * operator's RSS fell by about 20 MiB, and its start-up lost one list of them (docs/benchmarks.md, "Start-up
 * beside 1,000 Nodes").
 */
@Singleton
public class NodeCache {
    /** Until the owning controller has made its informer: nothing is known yet. */
    private volatile InformerEventSource<Node, ?> informer;

    /** Called once by the controller that makes the Node informer, before it starts. */
    public void serveFrom(InformerEventSource<Node, ?> nodes) {
        this.informer = nodes;
    }

    /** The informer exists and still watches (not merely synced once): only then is the cache current. */
    public boolean watching() {
        InformerEventSource<Node, ?> nodes = informer;
        return nodes != null && nodes.getStatus() == Status.HEALTHY;
    }

    public Stream<Node> all() {
        InformerEventSource<Node, ?> nodes = informer;
        return nodes == null ? Stream.empty() : nodes.list(node -> true);
    }

    public Optional<Node> get(String name) {
        InformerEventSource<Node, ?> nodes = informer;
        return nodes == null ? Optional.empty() : nodes.get(new ResourceID(name));
    }

    /**
     * What the cache keeps of a Node: what its readers read, so a thousand cached Nodes stay small. The
     * upgrades' wake-ups and availability count read readiness, kubelet version, cordon, who cordoned it and
     * who holds its lock; the audit reads name, age and kubelet version; the informer needs the resourceVersion.
     */
    public static Node pruned(Node node) {
        NodeBuilder pruned = new NodeBuilder().withNewMetadata().withName(node.getMetadata().getName())
                .withCreationTimestamp(node.getMetadata().getCreationTimestamp())
                .withResourceVersion(node.getMetadata().getResourceVersion()).endMetadata();
        NodeLock.holder(node).ifPresent(holder -> pruned.editMetadata().addToAnnotations(NodeAnnotations.LOCK, holder).endMetadata());
        String cordonedBy = node.getMetadata().getAnnotations() == null ? null : node.getMetadata().getAnnotations().get(NodeAnnotations.CORDONED_BY);
        if (cordonedBy != null) {
            pruned.editMetadata().addToAnnotations(NodeAnnotations.CORDONED_BY, cordonedBy).endMetadata();
        }
        if (NodeReadiness.isUnschedulable(node)) {
            pruned.withNewSpec().withUnschedulable(true).endSpec();
        }
        if (node.getStatus() != null) {
            pruned.withNewStatus().withNodeInfo(node.getStatus().getNodeInfo() == null ? null
                    : new NodeSystemInfoBuilder().withKubeletVersion(node.getStatus().getNodeInfo().getKubeletVersion()).build())
                    .withConditions(node.getStatus().getConditions() == null ? List.of()
                            : node.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).toList())
                    .endStatus();
        }
        return pruned.build();
    }
}
