package dev.cks.nodeops.operation;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testing.RecordingEvents;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class OperationRecorderTest {
    private static final Instant NOW = Instant.parse("2026-12-03T02:00:00Z");
    private final RecordingEvents events = new RecordingEvents();
    private final OperationRecorder recorder = new OperationRecorder("ScaleDown", events, new OperationMetrics(new SimpleMeterRegistry()));

    @Test
    void aStatusWriteRefusedForAnOlderReadIsRetriedFromANewReadWithoutWritingFromTheOldOne() {
        ScaleDown resource = scaleDown();

        var control = recorder.retrying(resource, new IllegalStateException("step failed", new KubernetesClientException("Conflict", 409, null)), NOW);

        assertThat(control.getResource()).as("no status written from the read that conflicted").isEmpty();
        assertThat(events.all()).isEmpty();
        assertThat(resource.getStatus().getConditions()).isEmpty();
    }

    @Test
    void anyOtherFailureIsReportedAsRetrying() {
        ScaleDown resource = scaleDown();

        var control = recorder.retrying(resource, new KubernetesClientException("Service Unavailable", 503, null), NOW);

        assertThat(control.getResource()).isPresent();
        assertThat(events.reasons()).containsExactly("Retrying");
    }

    private static ScaleDown scaleDown() {
        ScaleDown resource = new ScaleDown();
        resource.setMetadata(new ObjectMetaBuilder().withName("sd").withGeneration(1L).build());
        resource.setStatus(new ScaleDownStatus());
        return resource;
    }
}
