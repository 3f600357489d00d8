package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;

class ScaleDownStepsTest {
    @Test
    void drainsInStatusOrderAndFinishesTheNodeBeingDrainedFirst() {
        List<ScaleDownNodeStatus> nodes = List.of(node("a", Phase.Drained, true), node("b", Phase.Cordoned, true), node("c", Phase.Draining, true));
        assertThat(ScaleDownSteps.nextToDrain(nodes)).map(ScaleDownNodeStatus::getName).contains("c");
        assertThat(ScaleDownSteps.nextToDrain(List.of(node("a", Phase.Drained, true), node("b", Phase.Cordoned, true))))
                .map(ScaleDownNodeStatus::getName).contains("b");
        assertThat(ScaleDownSteps.nextToDrain(List.of(node("a", Phase.Drained, true), node("d", Phase.SkippedDown, false)))).isEmpty();
    }

    @Test
    void progressCountsOnlyNodesThatNeedADrain() {
        ScaleDownNodeStatus down = node("down", Phase.SkippedDown, null);
        down.setDownReason("its VM is stopped");
        assertThat(ScaleDownSteps.progress(List.of(node("a", Phase.Drained, true), node("b", Phase.Draining, true), down))).isEqualTo("1/2");
    }

    @Test
    void splitsAFailedRemovalIntoRemovedAndRemaining() {
        ScaleDownSteps.RemovalSplit split = ScaleDownSteps.split(List.of("vm-1", "vm-2"), Set.of("vm-2", "vm-9"));
        assertThat(split.removed()).containsExactly("vm-1");
        assertThat(split.remaining()).containsExactly("vm-2");
    }

    private static ScaleDownNodeStatus node(String name, Phase phase, Boolean cordonedByUs) {
        ScaleDownNodeStatus node = new ScaleDownNodeStatus();
        node.setName(name);
        node.setPhase(phase);
        node.setCordonedByUs(cordonedByUs);
        node.setVmId("vm-" + name);
        return node;
    }
}
