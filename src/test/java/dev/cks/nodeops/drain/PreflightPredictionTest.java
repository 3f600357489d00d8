package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

class PreflightPredictionTest {
    private static final Answer OK = new Answer(201, "accepted", List.of());
    private static final PreflightPrediction.Replacements NOT_CHECKED = PreflightPrediction.Replacements.notChecked();

    private static Pod pod(String name, String app) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).addToLabels("app", app).endMetadata().build();
    }

    private static PodDisruptionBudget budget(String name, String app, int desired, int healthy, int allowed) {
        return new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace("shop").withName(name).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
                .withNewStatus().withDesiredHealthy(desired).withCurrentHealthy(healthy).withDisruptionsAllowed(allowed).withExpectedPods(healthy).endStatus()
                .build();
    }

    private static Map<Pod, PodVerdict> evictAll(Pod... pods) {
        Map<Pod, PodVerdict> verdicts = new LinkedHashMap<>();
        for (Pod pod : pods) {
            verdicts.put(pod, PodVerdict.evict());
        }
        return verdicts;
    }

    @Test
    void podsOfOneBudgetOnTwoNodesCountTogether() {
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        verdicts.put("w-1", evictAll(pod("web-1", "web")));
        verdicts.put("w-2", evictAll(pod("web-2", "web")));
        PreflightPrediction.Report alone = PreflightPrediction.predict(Map.of("w-1", verdicts.get("w-1")), List.of(budget("web-pdb", "web", 2, 3, 1)), Map.of(), Draining.TOGETHER, NOT_CHECKED);
        assertThat(alone.budgets()).as("one node alone stays within the one allowed disruption").isEmpty();

        PreflightPrediction.Report together = PreflightPrediction.predict(verdicts, List.of(budget("web-pdb", "web", 2, 3, 1)), Map.of(), Draining.TOGETHER, NOT_CHECKED);

        assertThat(together.budgets()).singleElement().satisfies(b -> {
            assertThat(b.podsToLose()).isEqualTo(2);
            assertThat(b.blocks()).isFalse();
            assertThat(b.describe()).isEqualTo("pdb shop/web-pdb: needs 2 healthy, has 3, 1 disruption allowed; the drain would evict 2 of its pods "
                    + "(1 on w-1, 1 on w-2): evictions will wait for replacements to become Ready on other nodes");
        });
        assertThat(together.predictsBlock()).isFalse();
        assertThat(together.describe()).startsWith("Preflight predicts the drain will be slowed:");
    }

    /**
     * A NodeUpgrade drains one node at a time: a budget allowing one disruption lets each node lose its one pod, as
     * the chart's own PDB (maxUnavailable 1) does for its 2 replicas on a 1 control-plane + 1 worker cluster.
     */
    @Test
    void podsOfOneBudgetOnNodesDrainedOneAtATimeCountPerNode() {
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        verdicts.put("control-1", evictAll(pod("operator-a", "operator")));
        verdicts.put("w-1", evictAll(pod("operator-b", "operator")));
        PodDisruptionBudget budget = budget("operator", "operator", 1, 2, 1);

        PreflightPrediction.Report oneAtATime = PreflightPrediction.predict(verdicts, List.of(budget), Map.of(), Draining.ONE_AT_A_TIME, NOT_CHECKED);

        assertThat(oneAtATime.budgets()).isEmpty();
        assertThat(oneAtATime.describe()).isEqualTo("Preflight found nothing that would block the drain.");

        verdicts.put("w-1", evictAll(pod("operator-b", "operator"), pod("operator-c", "operator")));
        PreflightPrediction.Report twoOnOneNode = PreflightPrediction.predict(verdicts, List.of(budget), Map.of(), Draining.ONE_AT_A_TIME, NOT_CHECKED);
        assertThat(twoOnOneNode.predictsBlock()).isFalse();
        assertThat(twoOnOneNode.describe()).as("one node losing both pods waits for a replacement").startsWith("Preflight predicts the drain will be slowed:");
    }

    @Test
    void aBudgetAllowingNoDisruptionBlocks() {
        PreflightPrediction.Report report = PreflightPrediction.predict(Map.of("w-1", evictAll(pod("db-1", "db"), pod("web-1", "web"))),
                List.of(budget("db-pdb", "db", 1, 1, 0)), Map.of("shop/db-1", OK), Draining.TOGETHER, NOT_CHECKED);
        assertThat(report.predictsBlock()).isTrue();
        assertThat(report.describe()).contains("* pdb shop/db-pdb: needs 1 healthy, has 1, 0 disruptions allowed; the drain would evict 1 of its pods (1 on w-1): blocked");
    }

    @Test
    void aDryRun429BlocksEvenWhenTheNumbersLookFine() {
        PreflightPrediction.Report report = PreflightPrediction.predict(Map.of("w-1", evictAll(pod("web-1", "web"))),
                List.of(budget("web-pdb", "web", 2, 3, 1)), Map.of("shop/web-1", new Answer(429, "Cannot evict pod", List.of())), Draining.TOGETHER, NOT_CHECKED);
        assertThat(report.predictsBlock()).isTrue();
    }

    @Test
    void refusedPodsBlockAndAreNamedPerNode() {
        Map<Pod, PodVerdict> verdicts = new LinkedHashMap<>();
        verdicts.put(pod("solo", "solo"), PodVerdict.refuse("cannot delete pods that no controller manages (use force: true): shop/solo"));
        verdicts.put(pod("agent", "agent"), PodVerdict.skip("DaemonSet"));
        PreflightPrediction.Report report = PreflightPrediction.predict(Map.of("w-1", verdicts), List.of(budget("agent-pdb", "agent", 1, 1, 0)), Map.of(), Draining.TOGETHER, NOT_CHECKED);
        assertThat(report.predictsBlock()).isTrue();
        assertThat(report.budgets()).as("skipped pods are not evicted, so their budget does not matter").isEmpty();
        assertThat(report.describe()).isEqualTo("Preflight predicts the drain will be blocked:\n"
                + "* node w-1: cannot delete pods that no controller manages (use force: true): shop/solo");
    }

    @Test
    void nothingInTheWay() {
        PreflightPrediction.Report report = PreflightPrediction.predict(Map.of("w-1", evictAll(pod("web-1", "web"))), List.of(), Map.of("shop/web-1", OK), Draining.TOGETHER, NOT_CHECKED);
        assertThat(report.predictsBlock()).isFalse();
        assertThat(report.describe()).isEqualTo("Preflight found nothing that would block the drain.");
    }

    @Test
    void aBudgetWhoseReplacementsCannotBeScheduledBlocksNamingTheWorkloadAndWhy() {
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        verdicts.put("w-1", evictAll(pod("web-1", "web")));
        verdicts.put("w-2", evictAll(pod("web-2", "web")));
        String why = "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) are being drained";
        PreflightPrediction.Replacements nowhere = new PreflightPrediction.Replacements(
                Map.of("shop/web-1", new ReplacementPlacement.Nowhere(why), "shop/web-2", new ReplacementPlacement.Nowhere(why)),
                Map.of("shop/web-1", "Deployment shop/web", "shop/web-2", "Deployment shop/web"));

        PreflightPrediction.Report report = PreflightPrediction.predict(verdicts, List.of(budget("web-pdb", "web", 1, 2, 1)), Map.of(),
                Draining.TOGETHER, nowhere);

        assertThat(report.predictsBlock()).isTrue();
        assertThat(report.describe()).isEqualTo("Preflight predicts the drain will be blocked:\n"
                + "* pdb shop/web-pdb: needs 1 healthy, has 2, 1 disruption allowed; the drain would evict 2 of its pods (1 on w-1, 1 on w-2): "
                + "blocked, because 1 of them can only go once replacements are Ready, and no replacement of Deployment shop/web can be scheduled: " + why);

        PreflightPrediction.Report oneAtATime = PreflightPrediction.predict(verdicts, List.of(budget("web-pdb", "web", 1, 2, 1)), Map.of(),
                Draining.ONE_AT_A_TIME, nowhere);
        assertThat(oneAtATime.predictsBlock()).as("one node at a time, each loses one pod, which the budget allows without a replacement").isFalse();
    }

    @Test
    void podsThatCannotBeReplacedButNeedNoReplacementAreNamedWithoutBlocking() {
        PreflightPrediction.Replacements nowhere = new PreflightPrediction.Replacements(
                Map.of("shop/web-1", new ReplacementPlacement.Nowhere("0/2 nodes are available: 2 Insufficient memory")),
                Map.of("shop/web-1", "Deployment shop/web"));
        Pod web = new PodBuilder(pod("web-1", "web")).editMetadata().addNewOwnerReference().withKind("ReplicaSet").withName("web-1a")
                .withController(true).endOwnerReference().endMetadata().build();

        PreflightPrediction.Report report = PreflightPrediction.predict(Map.of("w-1", evictAll(web)), List.of(), Map.of(), Draining.TOGETHER, nowhere);

        assertThat(report.predictsBlock()).isFalse();
        assertThat(report.describe()).contains("* Deployment shop/web would run short: its evicted pods cannot be replaced, "
                + "0/2 nodes are available: 2 Insufficient memory");
    }
}
