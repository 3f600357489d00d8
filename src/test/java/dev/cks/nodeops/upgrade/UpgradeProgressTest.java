package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

class UpgradeProgressTest {
    private static final Instant NOW = Instant.parse("2026-01-01T00:10:00Z");

    static UpgradeNodeStatus entry(String name, Phase phase) {
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName(name);
        node.setPhase(phase);
        return node;
    }

    @Test
    void progressCountsDoneAndSkippedNodesNotSoakingOnes() {
        List<UpgradeNodeStatus> nodes = List.of(entry("a", Phase.Skipped), entry("b", Phase.Succeeded), entry("c", Phase.Draining),
                entry("d", Phase.Soaking), entry("e", Phase.Pending));

        assertThat(UpgradeProgress.progress(nodes)).isEqualTo("2/5");
    }

    @Test
    void onlyANewRetryValueRestarts() {
        assertThat(UpgradeProgress.retryRequested("2", "1")).isTrue();
        assertThat(UpgradeProgress.retryRequested("1", "1")).isFalse();
        assertThat(UpgradeProgress.retryRequested(null, "1")).isFalse();
        assertThat(UpgradeProgress.retryRequested("1", null)).isTrue();
    }

    @Test
    void theReadyWaitEndsOnlyWhenReadyAndAtTheExactTarget() {
        Instant readyBy = NOW.plusSeconds(60);

        assertThat(UpgradeProgress.readyWait(node("n", false, null, "v1.33.4+vendor.1", true), "n", "v1.33.4", readyBy, NOW))
                .isEqualTo(new UpgradeProgress.ReadyAtTarget("v1.33.4+vendor.1"));
        assertThat(UpgradeProgress.readyWait(node("n", false, null, "v1.33.4", false), "n", "v1.33.4", readyBy, NOW))
                .as("NotReady at the target: the kubelet is restarting").isEqualTo(new UpgradeProgress.KeepWaiting(readyBy));
        assertThat(UpgradeProgress.readyWait(node("n", false, null, "v1.33.40", true), "n", "v1.33.4", readyBy, NOW))
                .isEqualTo(new UpgradeProgress.KeepWaiting(readyBy));
    }

    @Test
    void theReadyWaitTimesOutWithASentenceNamingTheNodeAndWhatItReports() {
        UpgradeProgress.ReadyWait wait = UpgradeProgress.readyWait(node("n1", false, null, "v1.32.7", true), "n1", "v1.33.4", NOW, NOW);

        assertThat(wait).isInstanceOfSatisfying(UpgradeProgress.ReadyTimedOut.class, t -> assertThat(t.message())
                .contains("Node n1 was not Ready at v1.33.4").contains("it reports v1.32.7 and is READY").contains("retry"));
        assertThat(UpgradeProgress.readyWait(null, "gone", "v1.33.4", NOW, NOW)).isInstanceOfSatisfying(UpgradeProgress.ReadyTimedOut.class,
                t -> assertThat(t.message()).contains("the node no longer exists"));
    }
}
