package dev.cks.nodeops.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;

/** The lock's patches, and what they do to cluster-autoscaler's scale-down-disabled annotation (CKS autoscaling). */
class NodeLockTest {
    private static final String OWNER = NodeLock.owner("NodeUpgrade", "to-1-35-5", "0a1b");
    private static final String GONE = NodeLock.owner("ScaleDown", "gone", "9f8e");

    @Test
    void lockingAnUnprotectedNodeProtectsItAndRecordsThatWeDid() {
        Map<String, String> patch = annotations(NodeLock.lockPatch(node(Map.of()), OWNER, Optional.empty()));

        assertThat(patch).containsEntry(NodeAnnotations.LOCK, OWNER).containsEntry(NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true")
                .containsEntry(NodeAnnotations.SCALE_DOWN_DISABLED_BY, OWNER);
    }

    @Test
    void aNodeProtectedByItsOwnerIsLeftAsItWasOnLockAndRelease() {
        Node node = node(Map.of(NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true", NodeAnnotations.LOCK, OWNER));

        assertThat(annotations(NodeLock.lockPatch(node, OWNER, Optional.empty()))).containsOnlyKeys(NodeAnnotations.LOCK);
        assertThat(annotations(NodeLock.releasePatch(node, OWNER))).containsOnlyKeys(NodeAnnotations.LOCK);
    }

    @Test
    void theReleaseRemovesOnlyAProtectionThisOwnerSet() {
        Node ours = node(Map.of(NodeAnnotations.LOCK, OWNER, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true",
                NodeAnnotations.SCALE_DOWN_DISABLED_BY, OWNER));

        Map<String, String> patch = annotations(NodeLock.releasePatch(ours, OWNER));

        assertThat(patch).containsOnlyKeys(NodeAnnotations.LOCK, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, NodeAnnotations.SCALE_DOWN_DISABLED_BY)
                .allSatisfy((key, value) -> assertThat(value).as(key).isNull());
    }

    @Test
    void reclaimingTakesOverTheGoneOwnersProtectionSoItIsGivenBackLater() {
        Node left = node(Map.of(NodeAnnotations.LOCK, GONE, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true",
                NodeAnnotations.SCALE_DOWN_DISABLED_BY, GONE));

        assertThat(annotations(NodeLock.lockPatch(left, OWNER, Optional.of(GONE)))).containsEntry(NodeAnnotations.SCALE_DOWN_DISABLED_BY, OWNER);
    }

    private static Node node(Map<String, String> annotations) {
        return new NodeBuilder().withNewMetadata().withName("w1").withResourceVersion("7").withAnnotations(new HashMap<>(annotations))
                .endMetadata().build();
    }

    private static Map<String, String> annotations(String mergePatch) {
        return Serialization.unmarshal(mergePatch, Node.class).getMetadata().getAnnotations();
    }
}
