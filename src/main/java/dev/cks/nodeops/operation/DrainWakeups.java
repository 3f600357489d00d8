package dev.cks.nodeops.operation;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;

/**
 * The event source through which a drain's watches wake the operation that drains the node (the lock's
 * owner, {@code <Kind>/<name>/<uid>}; the operations are cluster-scoped), so that it acts when a pod has
 * left or a budget allows more instead of at its next timed look. When the operator stops, JOSDK stops its
 * event sources, and this one stops the drains' watches with it.
 */
public final class DrainWakeups<P extends HasMetadata> extends SimpleInboundEventSource<P> {
    private final NodeWork work;

    public DrainWakeups(NodeWork work) {
        super("drain-wakeups");
        this.work = work;
        work.onDrainMoved(owner -> propagateEvent(new ResourceID(nameOf(owner))));
    }

    /** The operation's name in a lock owner {@code <Kind>/<name>/<uid>}. */
    static String nameOf(String owner) {
        String[] parts = owner.split("/");
        return parts.length > 1 ? parts[1] : owner;
    }

    @Override
    public void stop() {
        work.stopDrainWatches();
        super.stop();
    }
}
