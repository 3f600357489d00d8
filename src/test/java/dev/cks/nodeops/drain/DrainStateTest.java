package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.DrainState.ReadBack;
import dev.cks.nodeops.drain.EvictionApi.PodRef;

/** What a drain's state keeps as it goes and once its node moves on; pure, no cluster and no other actor. */
class DrainStateTest {
    private static PodRef pod(int i) {
        return new PodRef("shop", "web-" + i, "uid-" + i);
    }

    @Test
    void evictionsAreCountedTheLastThreeNamedAndOnlyPodsStillOnTheNodeRemembered() {
        DrainState state = new DrainState();
        for (int i = 0; i < 5; i++) {
            state.recordEvicted(pod(i));
            state.recordWorkload("Deployment shop/web");
        }
        state.recordEvicted(pod(4));

        assertThat(state.getPodsEvicted()).as("a pod evicted twice counts once").isEqualTo(5);
        assertThat(state.getLastEvicted()).containsExactly("shop/web-2", "shop/web-3", "shop/web-4");
        assertThat(state.getWorkloads()).containsExactly("Deployment shop/web");

        state.forgetGone(List.of(pod(3), pod(4), new PodRef("shop", "web-0", "uid-new")));

        assertThat(state.getPodsSeen()).as("web-0 came back with another uid: another pod").containsExactly("uid-3", "uid-4");
        assertThat(state.evictedEarlier(pod(3))).isTrue();
        assertThat(state.evictedEarlier(new PodRef("shop", "web-0", "uid-new"))).isFalse();
    }

    @Test
    void aStatusWrittenWithNamespaceNameUidIsReadTheSame() {
        DrainState state = new DrainState();
        state.setPodsSeen(new java.util.ArrayList<>(List.of("shop/web-1/uid-1", "shop/web-2/uid-2")));

        state.forgetGone(List.of(pod(1)));

        assertThat(state.evictedEarlier(pod(1))).isTrue();
        assertThat(state.getPodsSeen()).containsExactly("shop/web-1/uid-1");
    }

    @Test
    void aDrainThatEndedKeepsItsWorkloadsForTheSoakAndANodeDoneWithKeepsCountsAndTheLadder() {
        DrainState state = new DrainState();
        state.setAttempt(2);
        state.setBlockedBy("pdb shop/web: 0 disruptions allowed");
        state.setLastApiError("429");
        EscalationRecord deletion = new EscalationRecord();
        deletion.setAction(EscalationStep.Action.DeletePods);
        state.getEscalation().add(deletion);
        state.recordEvicted(pod(1));
        state.recordWorkload("Deployment shop/web");

        DrainState ended = DrainState.copyOf(state);
        ended.keepFor(ReadBack.WORKLOADS);
        assertThat(ended.getPodsSeen()).isEmpty();
        assertThat(ended.getWorkloads()).containsExactly("Deployment shop/web");
        assertThat(ended.getLastEvicted()).containsExactly("shop/web-1");

        DrainState done = DrainState.copyOf(state);
        done.keepFor(ReadBack.NOTHING);
        assertThat(done.getPodsEvicted()).isEqualTo(1);
        assertThat(done.getEscalation()).as("the ladder's records, a DeletePods intent among them, stay").containsExactly(deletion);
        assertThat(done.getWorkloads()).isEmpty();
        assertThat(done.getLastEvicted()).isEmpty();
        assertThat(done.getAttempt()).isNull();
        assertThat(done.getBlockedBy()).isNull();
        assertThat(done.getLastApiError()).isNull();
        assertThat(done.evictedSummary()).isEqualTo("1 pod(s) evicted");
        assertThat(ended.evictedSummary()).isEqualTo("1 pod(s) evicted, of Deployment shop/web");

        DrainState running = DrainState.copyOf(state);
        running.keepFor(ReadBack.ALL);
        assertThat(running.getPodsSeen()).containsExactly("uid-1");
        assertThat(running.getBlockedBy()).isNotNull();
    }
}
