package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** The fence's decision, and that the operator's client asks it before each write and never before a read. */
class LeaderFenceTest {
    private static final Instant T0 = Instant.parse("2026-12-03T02:00:00Z");
    private final ManualTime time = new ManualTime(T0);
    private final List<String> stops = new ArrayList<>();
    private final LeaderFence fence = new LeaderFence("operator-a", Duration.ofSeconds(20), time, why -> {
        stops.add(why);
        throw new Halted(why);
    });

    @Test
    void aReplicaThatNeverLedIsNotStopped() {
        time.advance(Duration.ofHours(1));
        fence.beforeWrite("PUT lease");
        assertThat(stops).isEmpty();
    }

    @Test
    void aLeaderResumedPastItsRenewDeadlineIsStoppedBeforeItsNextWrite() {
        fence.deadline().startedLeading(T0);
        fence.deadline().read("operator-a", T0.plusSeconds(2));
        time.advance(Duration.ofSeconds(21));
        fence.beforeWrite("scaleKubernetesCluster");
        assertThat(stops).isEmpty();

        // Frozen from here for longer than the Lease: no read of the Lease came in meanwhile.
        time.advance(Duration.ofSeconds(39));
        assertThatThrownBy(() -> fence.beforeWrite("scaleKubernetesCluster")).isInstanceOf(Halted.class);
        assertThat(stops).singleElement().asString().contains("not renewed since 2026-12-03T02:00:02Z").contains("not sending scaleKubernetesCluster");
    }

    @Test
    void aLeaderThatSawAnotherHolderIsStoppedAtItsNextWriteWhateverTheClock() {
        fence.deadline().startedLeading(T0);
        fence.deadline().read("operator-b", T0.plusSeconds(1));
        assertThatThrownBy(() -> fence.beforeWrite("PATCH status")).isInstanceOf(Halted.class);
        assertThat(stops).singleElement().asString().contains("held by operator-b");
    }

    @Test
    void theOperatorsClientAsksTheFenceBeforeEachWriteAndNeverBeforeARead() {
        fence.deadline().startedLeading(T0);
        time.advance(Duration.ofSeconds(60));
        // Nothing listens there: a request the fence lets through fails on the connection instead.
        Config nowhere = new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").withRequestRetryBackoffLimit(0).withConnectionTimeout(1000).build();
        try (KubernetesClient client = new FencedKubernetesClient().kubernetesClient(new KubernetesSerialization(), nowhere, fence)) {
            assertThatThrownBy(() -> client.configMaps().inNamespace("n").withName("c").get()).isInstanceOf(KubernetesClientException.class)
                    .hasRootCauseInstanceOf(java.net.ConnectException.class);
            assertThat(stops).as("a read passes").isEmpty();

            assertThatThrownBy(() -> client.configMaps().inNamespace("n").resource(new ConfigMapBuilder().withNewMetadata().withName("c").endMetadata()
                    .build()).create()).as("stopped on the calling thread, before the request").isInstanceOf(Halted.class);
            assertThat(stops).singleElement().asString().contains("not sending POST /api/v1/namespaces/n/configmaps");
        }
    }

    private static final class Halted extends RuntimeException {
        Halted(String why) {
            super(why);
        }
    }
}
