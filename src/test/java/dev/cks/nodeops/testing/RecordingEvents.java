package dev.cks.nodeops.testing;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.common.EventRecorder;
import io.fabric8.kubernetes.api.model.HasMetadata;

/** Records events instead of writing them; the shared recorder's writing is tested with it. Events on Nodes are kept apart. */
public final class RecordingEvents extends EventRecorder {
    public record RecordedEvent(String type, String reason, String message) {
    }

    public record NodeEvent(String node, String type, String reason, String message) {
    }

    private final List<RecordedEvent> events = new ArrayList<>();
    private final List<NodeEvent> onNodes = new ArrayList<>();

    public RecordingEvents() {
        super(null, Clock.systemUTC());
    }

    @Override
    public void warning(HasMetadata subject, String reason, String message) {
        events.add(new RecordedEvent("Warning", reason, message));
    }

    @Override
    public void normal(HasMetadata subject, String reason, String message) {
        events.add(new RecordedEvent("Normal", reason, message));
    }

    @Override
    public void normalOnNode(String node, String reason, String message) {
        onNodes.add(new NodeEvent(node, "Normal", reason, message));
    }

    @Override
    public void warningOnNode(String node, String reason, String message) {
        onNodes.add(new NodeEvent(node, "Warning", reason, message));
    }

    /** The events recorded on that Node, oldest first. */
    public List<NodeEvent> onNode(String node) {
        return onNodes.stream().filter(e -> e.node().equals(node)).toList();
    }

    public List<RecordedEvent> all() {
        return List.copyOf(events);
    }

    public List<String> reasons() {
        return events.stream().map(RecordedEvent::reason).toList();
    }

    /** The events recorded so far, forgetting them. */
    public List<RecordedEvent> drain() {
        List<RecordedEvent> copy = List.copyOf(events);
        events.clear();
        return copy;
    }
}
