package dev.cks.nodeops.drainability;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.upgrade.UpgradePlan;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;

/**
 * Wakes the DrainReports that select a Node when it comes, goes, or changes what a verdict reads of it without a pod
 * moving: its opt-out, its cordon, its labels. From the operator's one {@link NodeCache}; heartbeats and other status
 * noise wake nobody. Pods and budgets are read at the interval only: a watch of every pod of the cluster would hold
 * them all between passes and wake a report at every pod's start, to save at most one interval.
 */
final class NodeChanges extends AbstractEventSource<Node, DrainReport> implements ResourceEventHandler<Node> {
    /** What of a Node changes a verdict by itself. Pure; the same for a full or a pruned Node. */
    record Seen(boolean optedOut, boolean unschedulable, Map<String, String> labels) {
        static Seen of(Node node) {
            Map<String, String> labels = node.getMetadata().getLabels();
            return new Seen(NodeAnnotations.excluded(node).isPresent(), NodeReadiness.isUnschedulable(node), labels == null ? Map.of() : labels);
        }
    }

    private final NodeCache nodes;
    private final Supplier<Stream<DrainReport>> reports;
    private final Duration syncTimeout;

    NodeChanges(NodeCache nodes, Supplier<Stream<DrainReport>> reports, Duration syncTimeout) {
        super(Node.class, "drainreport-nodes");
        this.nodes = nodes;
        this.reports = reports;
        this.syncTimeout = syncTimeout;
    }

    /** The reports whose selector selects the node (a node whose labels changed wakes those of its old labels too). */
    static Stream<ResourceID> concerned(Node node, Stream<DrainReport> reports) {
        return reports.filter(r -> r.getSpec() == null || UpgradePlan.selects(r.getSpec().getNodeSelector(), node)).map(ResourceID::fromResource);
    }

    @Override
    public void start() {
        nodes.subscribe(this);
        nodes.awaitSynced(syncTimeout);
        super.start();
    }

    @Override
    public void stop() {
        nodes.unsubscribe(this);
        super.stop();
    }

    @Override
    public Status getStatus() {
        return nodes.watching() ? Status.HEALTHY : Status.UNHEALTHY;
    }

    /** Passes list Nodes themselves; the cache only wakes. */
    @Override
    public Set<Node> getSecondaryResources(DrainReport primary) {
        return Set.of();
    }

    @Override
    public void onAdd(Node node) {
        wake(node);
    }

    @Override
    public void onUpdate(Node older, Node newer) {
        if (!Objects.equals(Seen.of(newer), Seen.of(older))) {
            wake(older);
            wake(newer);
        }
    }

    @Override
    public void onDelete(Node node, boolean finalStateUnknown) {
        wake(node);
    }

    private void wake(Node node) {
        if (isRunning()) {
            concerned(node, reports.get()).forEach(report -> getEventHandler().handleEvent(new Event(report)));
        }
    }
}
