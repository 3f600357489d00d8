package dev.cks.nodeops.nodes;

import dev.cks.nodeops.testing.TestNodes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;

class CordonTest {
    private static final String US = "ScaleDown/shrink";

    private static Node with(boolean unschedulable, String cordonedBy) {
        TestNodes.Builder node = TestNodes.node("w-1");
        if (unschedulable) {
            node.unschedulable();
        }
        return cordonedBy == null ? node.build() : node.annotation(NodeAnnotations.CORDONED_BY, cordonedBy).build();
    }

    @Test
    void decidesFromWhatTheNodeSays() {
        assertThat(Cordon.decide(with(false, null), US)).isEqualTo(Cordon.Decision.CORDON);
        assertThat(Cordon.decide(with(true, null), US)).isEqualTo(Cordon.Decision.CORDONED_BEFORE);
        assertThat(Cordon.decide(with(true, "NodeUpgrade/other"), US)).isEqualTo(Cordon.Decision.CORDONED_BEFORE);
        assertThat(Cordon.decide(with(true, US), US)).isEqualTo(Cordon.Decision.OURS);
        assertThat(Cordon.decide(with(false, US), US)).as("someone uncordoned it: cordon again, still ours").isEqualTo(Cordon.Decision.OURS);
        assertThat(Cordon.decide(null, US)).as("unreadable").isEqualTo(Cordon.Decision.CORDONED_BEFORE);
    }

    @Test
    void uncordonsOnlyWhatTheNodeSaysWeCordoned() {
        assertThat(Cordon.mayUncordon(with(true, US), US)).isTrue();
        assertThat(Cordon.mayUncordon(with(true, null), US)).isFalse();
        assertThat(Cordon.mayUncordon(with(true, "NodeUpgrade/other"), US)).isFalse();
        assertThat(Cordon.mayUncordon(null, US)).isFalse();
    }
}
