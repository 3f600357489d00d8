package dev.cks.nodeops.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Shape: a CKS cluster with autoscaling on (cluster-autoscaler with CloudStack's provider runs in it). Other
 * actor: cluster-autoscaler, which removes an underused node unless it carries
 * {@code cluster-autoscaler.kubernetes.io/scale-down-disabled: "true"} — a node being drained is underused by
 * design. The autoscaler itself does not run on the bed: what it reads, the annotation on the Node, is asserted.
 */
@ExtendWith(TestBedExtension.class)
class NodeLockIT {
    private static final String OWNER = NodeLock.owner("NodeUpgrade", "to-1-35-5", "0a1b");
    private static final String OTHER = NodeLock.owner("NodeUpgrade", "earlier", "9f8e");

    @Test
    void whileLockedTheNodeIsOutOfTheAutoscalersReachAndTheReleaseGivesItBack(TestBed bed) {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("lck").getMetadata().getName();
        try {
            NodeLock locks = new NodeLock(client);

            assertThat(locks.acquire(node, OWNER, holder -> false)).isInstanceOf(NodeLock.Acquired.class);
            assertThat(annotations(client, node)).containsEntry(NodeAnnotations.LOCK, OWNER)
                    .containsEntry(NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true").containsEntry(NodeAnnotations.SCALE_DOWN_DISABLED_BY, OWNER);

            locks.release(node, OTHER);
            assertThat(annotations(client, node)).as("another owner's release changes nothing")
                    .containsEntry(NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true");

            locks.release(node, OWNER);
            assertThat(annotations(client, node)).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED,
                    NodeAnnotations.SCALE_DOWN_DISABLED_BY);
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    @Test
    void aNodeTheOwnerKeptFromScaleDownKeepsItsAnnotationAfterTheRelease(TestBed bed) {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("lck").getMetadata().getName();
        try {
            annotate(client, node, "{\"" + NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED + "\":\"true\"}");
            NodeLock locks = new NodeLock(client);

            locks.acquire(node, OWNER, holder -> false);
            assertThat(annotations(client, node)).doesNotContainKey(NodeAnnotations.SCALE_DOWN_DISABLED_BY);
            locks.release(node, OWNER);

            assertThat(annotations(client, node)).doesNotContainKey(NodeAnnotations.LOCK)
                    .containsEntry(NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED, "true");
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    @Test
    void aReclaimedLockTakesOverTheGoneOwnersProtectionAndGivesItBack(TestBed bed) {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("lck").getMetadata().getName();
        try {
            NodeLock locks = new NodeLock(client);
            locks.acquire(node, OTHER, holder -> false);

            assertThat(locks.acquire(node, OWNER, OTHER::equals)).isEqualTo(new NodeLock.Reclaimed(OTHER));
            assertThat(annotations(client, node)).containsEntry(NodeAnnotations.SCALE_DOWN_DISABLED_BY, OWNER);
            locks.release(node, OWNER);

            assertThat(annotations(client, node)).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED,
                    NodeAnnotations.SCALE_DOWN_DISABLED_BY);
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    private static Map<String, String> annotations(KubernetesClient client, String node) {
        Map<String, String> annotations = client.nodes().withName(node).get().getMetadata().getAnnotations();
        return annotations == null ? Map.of() : annotations;
    }

    private static void annotate(KubernetesClient client, String node, String annotations) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"annotations\":" + annotations + "}}");
    }
}
