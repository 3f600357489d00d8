package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.cks.nodeops.nodes.NodeCache;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;

/**
 * The NodeUpgrade controller's event source for Nodes: the operator's {@link NodeCache} informer, which starts
 * before the controllers do, instead of an informer of the controller's own that JOSDK would start only after
 * the NodeUpgrades are listed. A Node's change wakes only the upgrades it concerns
 * ({@link UpgradeEventSources#concerned}), and only when it changes what an upgrade acts on
 * ({@link UpgradeEventSources.NodeWake}): heartbeats, image lists and other status noise wake nobody.
 */
final class NodeWakeups extends AbstractEventSource<Node, NodeUpgrade> implements ResourceEventHandler<Node> {
    private final NodeCache nodes;
    private final Supplier<Stream<NodeUpgrade>> underWay;
    private final Duration syncTimeout;

    /**
     * @param underWay the NodeUpgrades not finished, from the controller's cache
     * @param syncTimeout how long {@link #start} waits for the first list, as JOSDK's informers do
     */
    NodeWakeups(NodeCache nodes, Supplier<Stream<NodeUpgrade>> underWay, Duration syncTimeout) {
        super(Node.class, "nodes");
        this.nodes = nodes;
        this.underWay = underWay;
        this.syncTimeout = syncTimeout;
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

    /** Unhealthy (the operator not ready) until the Nodes are listed, and whenever their watch is down. */
    @Override
    public Status getStatus() {
        return nodes.watching() ? Status.HEALTHY : Status.UNHEALTHY;
    }

    /** Reconciles read Nodes through the API server or {@link NodeCache}, not as secondary resources. */
    @Override
    public Set<Node> getSecondaryResources(NodeUpgrade primary) {
        return Set.of();
    }

    @Override
    public void onAdd(Node node) {
        wake(node);
    }

    @Override
    public void onUpdate(Node older, Node newer) {
        if (!Objects.equals(UpgradeEventSources.NodeWake.of(newer), UpgradeEventSources.NodeWake.of(older))) {
            wake(newer);
        }
    }

    @Override
    public void onDelete(Node node, boolean finalStateUnknown) {
        wake(node);
    }

    private void wake(Node node) {
        UpgradeEventSources.concerned(node, underWay.get()).forEach(upgrade -> getEventHandler().handleEvent(new Event(upgrade)));
    }
}
