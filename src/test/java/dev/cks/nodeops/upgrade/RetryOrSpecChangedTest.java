package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

class RetryOrSpecChangedTest {
    private static NodeUpgrade upgrade(long generation, String retry, String phase) {
        NodeUpgrade upgrade = new NodeUpgrade();
        ObjectMetaBuilder meta = new ObjectMetaBuilder().withName("nu").withGeneration(generation);
        if (retry != null) {
            meta.addToAnnotations(NodeAnnotations.RETRY, retry);
        }
        upgrade.setMetadata(meta.build());
        upgrade.setStatus(new NodeUpgradeStatus());
        upgrade.getStatus().setMessage(phase);
        return upgrade;
    }

    private final RetryOrSpecChanged filter = new RetryOrSpecChanged();

    @Test
    void aNewRetryValueOrGenerationWakesTheReconcilerButOurOwnStatusPatchDoesNot() {
        assertThat(filter.accept(upgrade(1, "2", "x"), upgrade(1, "1", "x"))).isTrue();
        assertThat(filter.accept(upgrade(1, "1", "x"), upgrade(1, null, "x"))).isTrue();
        assertThat(filter.accept(upgrade(2, null, "x"), upgrade(1, null, "x"))).isTrue();
        assertThat(filter.accept(upgrade(1, "1", "draining"), upgrade(1, "1", "cordoned"))).isFalse();
    }
}
