package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.NodeWakeups;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

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
    record NodeWake(NodeReadiness.State readiness, String kubeletVersion, boolean unschedulable, String lockHolder, boolean optedOut,
            Map<String, String> labels) {
        /** The opt-out and the labels matter to a Continuous NodeUpgrade: a node that stops opting out, or comes into its selection. */
        static NodeWake of(Node node) {
            Map<String, String> labels = node.getMetadata().getLabels();
            return new NodeWake(NodeReadiness.state(node), NodeReadiness.kubeletVersion(node), NodeReadiness.isUnschedulable(node),
                    NodeLock.holder(node).orElse(null), NodeAnnotations.excluded(node).isPresent(), labels == null ? Map.of() : labels);
        }
    }


    /**
     * The upgrades a Node's change concerns: the one holding its lock, those working on or waiting for it, and the
     * Continuous ones whose selector matches it (a node that joins or comes back below the target is theirs to upgrade).
     */
    static Set<ResourceID> concerned(Node node, Stream<NodeUpgrade> underWay) {
        String name = node.getMetadata().getName();
        String holder = NodeLock.holder(node).orElse(null);
        return underWay.filter(upgrade -> NodeLock.names(holder, NodeUpgradeReconciler.owner(upgrade)) || worksOn(upgrade, name) || holds(upgrade, node)
                || checksIsoOn(upgrade, name)).map(ResourceID::fromResource).collect(Collectors.toSet());
    }

    /** The ISO canary runs on the node (still Pending there): its deletion, opt-out or relabelling hands the canary on at once. */
    private static boolean checksIsoOn(NodeUpgrade upgrade, String node) {
        IsoCanaryStatus canary = upgrade.getStatus() == null ? null : upgrade.getStatus().getIsoCanary();
        return canary != null && !canary.isOver() && node.equals(canary.getNode());
    }

    private static boolean holds(NodeUpgrade upgrade, Node node) {
        return upgrade.getSpec() != null && upgrade.getSpec().continuous() && upgrade.getSpec().nodeSelection().selects(node);
    }

    /** status.currentNode names the nodes in progress, comma-separated when maxUnavailable lets several go at once. */
    private static boolean worksOn(NodeUpgrade upgrade, String node) {
        String current = upgrade.getStatus() == null ? null : upgrade.getStatus().getCurrentNode();
        return current != null && List.of(current.split(",")).contains(node);
    }

    /** A Node's change wakes the upgrades it concerns ({@link #concerned}), when it changes what they act on ({@link NodeWake}). */
    static NodeWakeups<NodeUpgrade> nodeWakeups(NodeCache cache, Supplier<Stream<NodeUpgrade>> underWay, Duration syncTimeout) {
        return new NodeWakeups<>("nodes", cache, NodeWake::of, node -> concerned(node, underWay.get()).stream(), syncTimeout);
    }

    /** The event sources: Nodes (from the operator's {@link NodeCache}) and the upgrade Jobs. */
    static List<EventSource<?, NodeUpgrade>> prepare(EventSourceContext<NodeUpgrade> context, OperatorSettings settings, NodeCache cache) {
        NodeWakeups<NodeUpgrade> nodes = nodeWakeups(cache, () -> context.getPrimaryCache().list(u -> u.getStatus() == null || !u.getStatus().finished()),
                context.getControllerConfiguration().getConfigurationService().cacheSyncTimeout());
        // Our Jobs, by their label, wake the upgrade that owns them when they finish.
        InformerEventSource<Job, NodeUpgrade> jobs = new InformerEventSource<>(InformerEventSourceConfiguration.from(Job.class, NodeUpgrade.class)
                .withName("upgrade-jobs")
                .withNamespaces(Set.of(settings.namespace()))
                .withFollowControllerNamespacesChanges(false)
                .withLabelSelector(UpgradeJob.LABEL_NODEUPGRADE)
                // The label may hold a hash of a long name; the annotation holds the name itself.
                .withSecondaryToPrimaryMapper(job -> UpgradeJob.nodeUpgradeOf(job).map(ResourceID::new).stream().collect(Collectors.toSet()))
                .build(), context);
        return List.of(nodes, jobs);
    }
}
