package dev.cks.nodeops.drainability;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.NodeWakeups;
import io.fabric8.kubernetes.api.model.Node;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

/**
 * Which Node changes wake which DrainReports: a Node it selects that comes, goes, or changes what a verdict reads of it
 * without a pod moving — its opt-out, its cordon, its labels. Pure. Pods and budgets are read at the interval only: a
 * watch of every pod of the cluster would hold them all between passes and wake a report at every pod's start, to
 * save at most one interval.
 */
final class NodeChanges {
    /** What of a Node changes a verdict by itself; the same for a full or a pruned Node. */
    record Seen(boolean optedOut, boolean unschedulable, Map<String, String> labels) {
        static Seen of(Node node) {
            Map<String, String> labels = node.getMetadata().getLabels();
            return new Seen(NodeAnnotations.excluded(node).isPresent(), NodeReadiness.isUnschedulable(node), labels == null ? Map.of() : labels);
        }
    }

    private NodeChanges() {
    }

    /** The reports whose selector selects the node. */
    static Stream<ResourceID> concerned(Node node, Stream<DrainReport> reports) {
        return reports.filter(r -> r.getSpec() == null || r.getSpec().nodeSelection().selects(node)).map(ResourceID::fromResource);
    }

    /** The event source, from the operator's one {@link NodeCache}. */
    static NodeWakeups<DrainReport> wakeups(NodeCache cache, Supplier<Stream<DrainReport>> reports, Duration syncTimeout) {
        return new NodeWakeups<>("drainreport-nodes", cache, Seen::of, node -> concerned(node, reports.get()), syncTimeout);
    }
}
