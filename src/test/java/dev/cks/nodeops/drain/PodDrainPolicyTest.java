package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.PodVerdict.Action;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class PodDrainPolicyTest {
    private static final Instant NOW = Instant.parse("2026-05-01T10:00:00Z");

    private static Pod pod(String name, String behavior, String order, String phase) {
        PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).endMetadata()
                .withNewSpec().endSpec().withNewStatus().withPhase(phase).endStatus();
        if (behavior != null) {
            pod.editMetadata().addToAnnotations(PodDrainPolicy.BEHAVIOR, behavior).endMetadata();
        }
        if (order != null) {
            pod.editMetadata().addToAnnotations(PodDrainPolicy.ORDER, order).endMetadata();
        }
        return pod.build();
    }

    @Test
    void skipLeavesThePodEvenWhenKubectlsRulesWouldRefuseIt() {
        Pod bare = pod("keeper", "skip", null, "Running");
        PodVerdict verdict = PodFilters.forOptions(new DrainOptions(), NOW).verdict(bare);
        assertThat(verdict).isEqualTo(PodVerdict.skip("annotated nodeops.cks.dev/drain: skip, left on the node: shop/keeper"));
    }

    @Test
    void waitCompletedHoldsARunningPodAndLetsAFinishedOneGoAsAnyOther() {
        assertThat(PodDrainPolicy.behavior(pod("batch", "wait-completed", null, "Running")))
                .isEqualTo(PodVerdict.waitFor("annotated nodeops.cks.dev/drain: wait-completed, the drain waits until it has completed: shop/batch"));
        assertThat(PodDrainPolicy.behavior(pod("batch", "wait-completed", null, "Succeeded")).action()).isEqualTo(Action.EVICT);
        assertThat(PodDrainPolicy.behavior(pod("web", "drain", null, "Running")).action()).isEqualTo(Action.EVICT);
        assertThat(PodDrainPolicy.behavior(pod("web", null, null, "Running")).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void valuesTheDrainCannotReadRefuseItNamingThePodAndTheValue() {
        assertThat(PodDrainPolicy.behavior(pod("web", "Skip", null, "Running"))).isEqualTo(PodVerdict.refuse("pod shop/web has "
                + "nodeops.cks.dev/drain: 'Skip', which is not one of skip, wait-completed or drain; fix the annotation (nothing was evicted)"));
        assertThat(PodDrainPolicy.behavior(pod("web", null, "first", "Running"))).isEqualTo(PodVerdict.refuse("pod shop/web has "
                + "nodeops.cks.dev/drain-order: 'first', which is not an integer; fix the annotation (nothing was evicted)"));
        assertThat(PodDrainPolicy.behavior(pod("web", "skip", "first", "Running")).action()).as("a skipped pod's order does not matter")
                .isEqualTo(Action.SKIP);
    }

    @Test
    void theLowestOrderStillOnTheNodeGoesFirstUnsetMeansZero() {
        assertThat(PodDrainPolicy.order(pod("web", null, null, "Running"))).isZero();
        assertThat(PodDrainPolicy.order(pod("db", null, " 10 ", "Running"))).isEqualTo(10);
        assertThat(PodDrainPolicy.current(List.of(pod("db", null, "10", "Running"), pod("web", null, null, "Running"),
                pod("proxy", null, "-5", "Running")))).isEqualTo(-5);
        assertThat(PodDrainPolicy.current(List.of())).isZero();
    }

    @Test
    void preflightNamesAwaitedPodsWithoutPredictingABlock() {
        java.util.Map<Pod, PodVerdict> verdicts = new java.util.LinkedHashMap<>();
        Pod batch = pod("batch", "wait-completed", null, "Running");
        verdicts.put(batch, PodDrainPolicy.behavior(batch));
        PreflightPrediction.Report report = PreflightPrediction.predict(java.util.Map.of("w-1", verdicts), List.of(), java.util.Map.of(),
                Draining.ONE_AT_A_TIME, PreflightPrediction.Replacements.notChecked());
        assertThat(report.predictsBlock()).isFalse();
        assertThat(report.describe()).contains("* node w-1: annotated nodeops.cks.dev/drain: wait-completed, the drain waits until it has completed: shop/batch");
    }
}
