package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSteps.RemovalSeen;

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
    void afterARestartBetweenRequestAndJobIdCloudStackSaysWhatHappened() throws Exception {
        List<String> ours = List.of("vm-1", "vm-2");
        assertThat(ScaleDownSteps.removalSeen(cluster("Running", "vm-3"), ours)).isEqualTo(RemovalSeen.DONE);
        assertThat(ScaleDownSteps.removalSeen(cluster("Scaling", "vm-1", "vm-2", "vm-3"), ours)).isEqualTo(RemovalSeen.IN_PROGRESS);
        assertThat(ScaleDownSteps.removalSeen(cluster("Running", "vm-1", "vm-2", "vm-3"), ours)).isEqualTo(RemovalSeen.NOT_STARTED);
    }

    @Test
    void splitsAFailedRemovalIntoRemovedAndRemaining() {
        ScaleDownSteps.RemovalSplit split = ScaleDownSteps.split(List.of("vm-1", "vm-2"), Set.of("vm-2", "vm-9"));
        assertThat(split.removed()).containsExactly("vm-1");
        assertThat(split.remaining()).containsExactly("vm-2");
    }

    private static KubernetesCluster cluster(String state, String... vmIds) throws Exception {
        return CloudStackResponses.MAPPER.readValue("{\"id\":\"c1\",\"name\":\"prod\",\"state\":\"" + state + "\",\"virtualmachineids\":[\""
                + String.join("\",\"", vmIds) + "\"]}", KubernetesCluster.class);
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
