package dev.cks.nodeops.testing;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.common.EventRecorder;
import io.fabric8.kubernetes.api.model.HasMetadata;

/** Records events instead of writing them; the shared recorder's writing is tested with it. */
public final class RecordingEvents extends EventRecorder {
    public record RecordedEvent(String type, String reason, String message) {
    }

    private final List<RecordedEvent> events = new ArrayList<>();

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
