package dev.cks.nodeops.upgrade;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSystemInfoBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;

/**
 * What wakes a NodeUpgrade besides its own changes: Node changes and its upgrade Jobs. Decisions read
 * the API server (one Node per wake-up), so the informers are only there to wake — and to wake only
 * whom it concerns: in a cluster of a thousand nodes, one node's change must not reconcile every
 * upgrade under way (each reconcile of a draining upgrade costs a pod list, a PDB list and evictions).
 */
final class UpgradeEventSources {
    private UpgradeEventSources() {
    }

    /**
     * What of a Node can move an upgrade: readiness and version (the Ready wait), schedulability (a
     * cordon), and who holds its lock (a wait for the lock). Pure; the same for a full or a pruned Node.
     */
    record NodeWake(NodeReadiness.State readiness, String kubeletVersion, boolean unschedulable, String lockHolder) {
        static NodeWake of(Node node) {
            return new NodeWake(NodeReadiness.state(node), NodeReadiness.kubeletVersion(node), NodeReadiness.isUnschedulable(node),
                    NodeLock.holder(node).orElse(null));
        }
    }

    /**
     * Keeps of a Node only what {@link NodeWake} and the rollout's availability count
     * ({@link UpgradeRollout#isUnavailable}: readiness, cordon and who cordoned it) read, so a thousand
     * cached Nodes stay small.
     */
    static Node pruned(Node node) {
        NodeBuilder pruned = new NodeBuilder().withNewMetadata().withName(node.getMetadata().getName())
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

    /** The upgrades a Node's change concerns: the one holding its lock, and those working on or waiting for it. */
    static Set<ResourceID> concerned(Node node, Stream<NodeUpgrade> underWay) {
        String name = node.getMetadata().getName();
        String holder = NodeLock.holder(node).orElse(null);
        return underWay.filter(upgrade -> NodeLock.names(holder, NodeUpgradeReconciler.owner(upgrade)) || worksOn(upgrade, name))
                .map(ResourceID::fromResource).collect(Collectors.toSet());
    }

    /** status.currentNode names the nodes in progress, comma-separated when maxUnavailable lets several go at once. */
    private static boolean worksOn(NodeUpgrade upgrade, String node) {
        String current = upgrade.getStatus() == null ? null : upgrade.getStatus().getCurrentNode();
        return current != null && List.of(current.split(",")).contains(node);
    }

    /** The event sources, and the Node cache read by name (pruned Nodes, see {@link #pruned}). */
    record Prepared(List<EventSource<?, NodeUpgrade>> sources, Function<String, Optional<Node>> cachedNode) {
    }

    static Prepared prepare(EventSourceContext<NodeUpgrade> context, OperatorSettings settings) {
        InformerEventSource<Node, NodeUpgrade> nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, NodeUpgrade.class)
                .withName("nodes")
                .withItemStore(new TransformingItemStore<>(UpgradeEventSources::pruned))
                .withInformerListLimit(ListPages.PAGE) // a thousand nodes do not arrive in one answer
                // Heartbeats, image lists and other status noise wake nobody.
                .withOnUpdateFilter((newer, older) -> !Objects.equals(NodeWake.of(newer), NodeWake.of(older)))
                .withSecondaryToPrimaryMapper(node -> concerned(node,
                        context.getPrimaryCache().list(u -> u.getStatus() == null || !u.getStatus().finished())))
                .build(), context);
        // Our Jobs, by their label, wake the upgrade that owns them when they finish.
        InformerEventSource<Job, NodeUpgrade> jobs = new InformerEventSource<>(InformerEventSourceConfiguration.from(Job.class, NodeUpgrade.class)
                .withName("upgrade-jobs")
                .withNamespaces(Set.of(settings.namespace()))
                .withFollowControllerNamespacesChanges(false)
                .withLabelSelector(UpgradeJob.LABEL_NODEUPGRADE)
                // The label may hold a hash of a long name; the owner reference holds the name itself.
                .withSecondaryToPrimaryMapper(job -> job.getMetadata().getOwnerReferences().stream()
                        .filter(owner -> "NodeUpgrade".equals(owner.getKind())).map(owner -> new ResourceID(owner.getName()))
                        .collect(Collectors.toSet()))
                .build(), context);
        return new Prepared(List.of(nodes, jobs), name -> nodes.get(new ResourceID(name)));
    }
}
