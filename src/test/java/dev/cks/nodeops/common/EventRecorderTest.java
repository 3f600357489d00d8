package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.scaledown.ScaleDown;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

class EventRecorderTest {
    private static final Instant NOW = Instant.parse("2026-12-03T06:00:00.700Z");

    @Test
    void anEventOnANodeIsFoundWhereKubectlDescribeNodeLooksForIt() {
        Event event = EventRecorder.event(EventRecorder.aboutNode("w1"), "Normal", "Cordoned", "ScaleDown sd: Cordoned node w1.", NOW, 0xabcL);

        // kubectl describe node lists events by involvedObject kind, name, namespace "" and uid = the node's name.
        assertThat(event.getInvolvedObject().getKind()).isEqualTo("Node");
        assertThat(event.getInvolvedObject().getApiVersion()).isEqualTo("v1");
        assertThat(event.getInvolvedObject().getName()).isEqualTo("w1");
        assertThat(event.getInvolvedObject().getUid()).isEqualTo("w1");
        assertThat(event.getInvolvedObject().getNamespace()).isNull();
        assertThat(event.getMetadata().getNamespace()).isEqualTo("default");
        assertThat(event.getMetadata().getName()).isEqualTo("w1.abc");
        assertThat(event.getFirstTimestamp()).isEqualTo("2026-12-03T06:00:00Z");
        assertThat(event.getSource().getComponent()).isEqualTo(EventRecorder.COMPONENT);
    }

    @Test
    void anEventOnACustomResourceNamesItByItsUidAndALongMessageIsCut() {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.setMetadata(new ObjectMetaBuilder().withName("sd").withUid("uid-1").withResourceVersion("7").build());

        Event event = EventRecorder.event(EventRecorder.about(scaleDown), "Warning", "Refused", "x".repeat(2000), NOW, 1L);

        assertThat(event.getInvolvedObject().getKind()).isEqualTo("ScaleDown");
        assertThat(event.getInvolvedObject().getUid()).isEqualTo("uid-1");
        assertThat(event.getInvolvedObject().getResourceVersion()).isEqualTo("7");
        assertThat(event.getMessage()).hasSize(1024).endsWith("…");
    }
}
