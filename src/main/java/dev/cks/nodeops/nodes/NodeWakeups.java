package dev.cks.nodeops.nodes;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;

/**
 * A controller's event source for Nodes: the operator's {@link NodeCache} informer, which starts before the controllers
 * do, instead of an informer of the controller's own that JOSDK would start only after its resources are listed. A
 * Node's change wakes only the resources it concerns, before and after the change, and only when it changes what
 * matters to them: heartbeats, image lists and other status noise wake nobody.
 *
 * @param <P> the controller's kind
 */
public final class NodeWakeups<P extends HasMetadata> extends AbstractEventSource<Node, P> implements ResourceEventHandler<Node> {
    private final NodeCache nodes;
    private final Function<Node, ?> whatMatters;
    private final Function<Node, Stream<ResourceID>> concerned;
    private final Duration syncTimeout;

    /**
     * @param whatMatters what of a Node the controller acts on, comparable with equals; the same for a full or a pruned Node
     * @param concerned the resources a Node concerns (read from the controller's cache)
     * @param syncTimeout how long {@link #start} waits for the first list, as JOSDK's informers do
     */
    public NodeWakeups(String name, NodeCache nodes, Function<Node, ?> whatMatters, Function<Node, Stream<ResourceID>> concerned,
            Duration syncTimeout) {
        super(Node.class, name);
        this.nodes = nodes;
        this.whatMatters = whatMatters;
        this.concerned = concerned;
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
    public Set<Node> getSecondaryResources(P primary) {
        return Set.of();
    }

    @Override
    public void onAdd(Node node) {
        wake(concerned.apply(node));
    }

    @Override
    public void onUpdate(Node older, Node newer) {
        if (!Objects.equals(whatMatters.apply(newer), whatMatters.apply(older))) {
            // Those it concerned before too: a node relabelled out of a selector, or whose lock moved on.
            wake(Stream.concat(concerned.apply(older), concerned.apply(newer)));
        }
    }

    @Override
    public void onDelete(Node node, boolean finalStateUnknown) {
        wake(concerned.apply(node));
    }

    private void wake(Stream<ResourceID> resources) {
        resources.collect(java.util.stream.Collectors.toCollection(LinkedHashSet::new)).forEach(id -> getEventHandler().handleEvent(new Event(id)));
    }
}
