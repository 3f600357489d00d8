package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

class InformerNodeSourceTest {
    private static Node node(String name, String created) {
        return new NodeBuilder().withNewMetadata().withName(name).withCreationTimestamp(created).withResourceVersion("7")
                .addToLabels("kubernetes.io/hostname", name).endMetadata()
                .withNewSpec().withProviderID("cloudstack:///0c3f").endSpec()
                .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition()
                .withNewNodeInfo().withKubeletVersion("v1.34.2").withKernelVersion("6.8.0").endNodeInfo().endStatus()
                .build();
    }

    @Test
    void aWatchingInformerGivesNamesAndAges() {
        InformerNodeSource source = new InformerNodeSource(() -> true,
                () -> Stream.of(node("prod-node-18c2f3a9b1", "2026-11-01T10:00:00Z")));
        ClusterNodes nodes = source.read();
        assertThat(nodes.available()).isTrue();
        assertThat(nodes.nodes()).containsExactly(new NodeView("prod-node-18c2f3a9b1", Instant.parse("2026-11-01T10:00:00Z"), "v1.34.2"));
    }

    @Test
    void anInformerThatIsNotWatchingCountsAsUnreadable() {
        InformerNodeSource source = new InformerNodeSource(() -> false, () -> Stream.of(node("stale", "2026-11-01T10:00:00Z")));
        ClusterNodes nodes = source.read();
        assertThat(nodes.available()).isFalse();
        assertThat(nodes.unavailableReason()).isEqualTo(InformerNodeSource.NOT_WATCHING);
    }

    @Test
    void theCacheKeepsOnlyNameCreationResourceVersionAndKubeletVersion() {
        Node kept = InformerNodeSource.nameAndCreation(node("prod-node-18c2f3a9b1", "2026-11-01T10:00:00Z"));
        assertThat(kept.getMetadata().getName()).isEqualTo("prod-node-18c2f3a9b1");
        assertThat(kept.getMetadata().getCreationTimestamp()).isEqualTo("2026-11-01T10:00:00Z");
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("7");
        assertThat(kept.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(kept.getStatus().getConditions()).isNullOrEmpty();
        assertThat(kept.getStatus().getNodeInfo().getKubeletVersion()).isEqualTo("v1.34.2");
        assertThat(kept.getStatus().getNodeInfo().getKernelVersion()).isNull();
        assertThat(kept.getSpec()).isNull();
    }
}
