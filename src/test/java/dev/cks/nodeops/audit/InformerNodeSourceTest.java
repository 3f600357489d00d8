package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.nodes.NodeCache;
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
        InformerNodeSource source = new InformerNodeSource(() -> true, Optional::empty,
                () -> Stream.of(node("prod-node-18c2f3a9b1", "2026-11-01T10:00:00Z")));
        ClusterNodes nodes = source.read();
        assertThat(nodes.available()).isTrue();
        assertThat(nodes.nodes()).containsExactly(new NodeView("prod-node-18c2f3a9b1", Instant.parse("2026-11-01T10:00:00Z"), "v1.34.2"));
    }

    @Test
    void anInformerThatIsNotWatchingCountsAsUnreadable() {
        InformerNodeSource source = new InformerNodeSource(() -> false, Optional::empty, () -> Stream.of(node("stale", "2026-11-01T10:00:00Z")));
        ClusterNodes nodes = source.read();
        assertThat(nodes.available()).isFalse();
        assertThat(nodes.unavailableReason()).isEqualTo(InformerNodeSource.NOT_WATCHING);
    }

    @Test
    void aWatchThatStillRunsAfterTheRightToListWasRevokedDoesNotMakeTheCacheCurrent() {
        InformerNodeSource source = new InformerNodeSource(() -> true,
                () -> Optional.of("listing nodes failed with HTTP 403: nodes is forbidden: User \"op\" cannot list resource \"nodes\""),
                () -> Stream.of(node("stale", "2026-11-01T10:00:00Z")));
        ClusterNodes nodes = source.read();
        assertThat(nodes.available()).isFalse();
        assertThat(nodes.unavailableReason()).contains("HTTP 403").contains("cannot list resource \"nodes\"");
    }

    /** The audit reads the operator's one Node cache, pruned for the upgrades' needs: what the audit reads must survive the pruning. */
    @Test
    void theSharedCacheKeepsWhatTheAuditReads() {
        Node full = node("prod-node-18c2f3a9b1", "2026-11-01T10:00:00Z");
        InformerNodeSource source = new InformerNodeSource(() -> true, Optional::empty, () -> Stream.of(NodeCache.pruned(full)));
        assertThat(source.read().nodes()).containsExactly(new NodeView("prod-node-18c2f3a9b1", Instant.parse("2026-11-01T10:00:00Z"), "v1.34.2"));
        Node kept = NodeCache.pruned(full);
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("7");
        assertThat(kept.getMetadata().getLabels()).as("kept for a Continuous NodeUpgrade's selector").isEqualTo(full.getMetadata().getLabels());
        assertThat(kept.getStatus().getNodeInfo().getKernelVersion()).isNull();
        assertThat(kept.getSpec()).isNull();
    }
}
