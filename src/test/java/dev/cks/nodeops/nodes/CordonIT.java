package dev.cks.nodeops.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

@ExtendWith(TestBedExtension.class)
class CordonIT {
    private static final String OPERATION = "NodeUpgrade/to-1-35-5";

    @Test
    void cordonsOnceRemembersItOnTheNodeAndUncordonsOnlyWhatItCordoned(TestBed bed) {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("crd").getMetadata().getName();
        try {
            Cordon cordon = new Cordon(client);

            CordonRecord first = cordon.cordon(node, OPERATION);
            CordonRecord again = new Cordon(client).cordon(node, OPERATION);

            assertThat(first.cordonedByUs()).isTrue();
            assertThat(again.cordonedByUs()).as("after a restart the annotation says we cordoned it").isTrue();
            Node cordoned = client.nodes().withName(node).get();
            assertThat(cordoned.getSpec().getUnschedulable()).isTrue();
            assertThat(cordoned.getMetadata().getAnnotations()).containsEntry(NodeAnnotations.CORDONED_BY, OPERATION);
            assertThat(cordon.uncordon(node, "ScaleDown/other")).as("another operation never uncordons it").isFalse();
            assertThat(client.nodes().withName(node).get().getSpec().getUnschedulable()).isTrue();

            assertThat(cordon.uncordon(node, OPERATION)).isTrue();
            Node uncordoned = client.nodes().withName(node).get();
            assertThat(uncordoned.getSpec().getUnschedulable()).isNotEqualTo(Boolean.TRUE);
            assertThat(uncordoned.getMetadata().getAnnotations()).doesNotContainKey(NodeAnnotations.CORDONED_BY);
            assertThat(cordon.uncordon(node, OPERATION)).as("idempotent").isFalse();
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    @Test
    void aNodeCordonedBeforeIsNeverUncordoned(TestBed bed) {
        KubernetesClient client = bed.client();
        String node = bed.addWorker("crd").getMetadata().getName();
        try {
            client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":true}}");
            Cordon cordon = new Cordon(client);

            CordonRecord record = cordon.cordon(node, OPERATION);

            assertThat(record.cordonedByUs()).isFalse();
            assertThat(record.note()).contains("Node " + node + " was already unschedulable");
            assertThat(cordon.uncordon(node, OPERATION)).isFalse();
            Node after = client.nodes().withName(node).get();
            assertThat(after.getSpec().getUnschedulable()).isTrue();
            assertThat(after.getMetadata().getAnnotations()).doesNotContainKey(NodeAnnotations.CORDONED_BY);
        } finally {
            client.nodes().withName(node).delete();
        }
    }

    @Test
    void aNodeThatCannotBeReadCountsAsCordonedBefore(TestBed bed) {
        CordonRecord record = new Cordon(bed.client()).cordon("crd-node-does-not-exist", OPERATION);
        assertThat(record.cordonedByUs()).isFalse();
    }
}
