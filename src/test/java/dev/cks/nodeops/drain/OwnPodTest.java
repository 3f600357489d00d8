package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class OwnPodTest {
    private static final OwnPod OWN = new OwnPod("cks-node-operator", "cks-node-operator-7b6ff66f4-a");

    private static Pod pod(String namespace, String name) {
        return new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata().build();
    }

    @Test
    void theOwnPodIsHeldBackWhileAnythingElseHasToLeaveItsNode() {
        Pod own = pod("cks-node-operator", "cks-node-operator-7b6ff66f4-a");
        Pod standby = pod("cks-node-operator", "cks-node-operator-7b6ff66f4-b");

        assertThat(OWN.heldBack(List.of(standby, own), 0)).as("the standby's pod goes first").containsExactly(own);
        assertThat(OWN.heldBack(List.of(own), 1)).as("a pod still leaving, or awaited to complete").containsExactly(own);
        assertThat(OWN.heldBack(List.of(own), 0)).as("all that is left: it goes").isEmpty();
        assertThat(OWN.heldBack(List.of(standby), 0)).as("not on this node").isEmpty();
    }

    @Test
    void onlyThePodOfThatNameInTheOperatorsNamespaceIsItsOwn() {
        assertThat(OWN.is(pod("cks-node-operator", "cks-node-operator-7b6ff66f4-a"))).isTrue();
        assertThat(OWN.is(pod("shop", "cks-node-operator-7b6ff66f4-a"))).isFalse();
        assertThat(OwnPod.NONE.is(pod("cks-node-operator", "cks-node-operator-7b6ff66f4-a"))).as("an operator outside the cluster").isFalse();
        assertThat(OwnPod.NONE.heldBack(List.of(pod("cks-node-operator", "x"), pod("shop", "web")), 0)).isEmpty();
    }
}
