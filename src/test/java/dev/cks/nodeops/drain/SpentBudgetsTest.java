package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

class SpentBudgetsTest {
    private static final Instant T0 = Instant.parse("2026-12-01T03:00:00Z");

    @Test
    void anEvictionCountsAgainstTheBudgetUntilAVersionNamesItsPod() {
        SpentBudgets spent = new SpentBudgets();
        PodDisruptionBudget seen = budget(2, Map.of());
        spent.spent(pod("web-0", true), List.of(seen), T0);
        spent.spent(pod("web-1", true), List.of(seen), T0);

        // The same version the drain planned on: both disruptions are spent.
        assertThat(allowed(spent.applyTo(List.of(seen), T0.plusSeconds(1)))).isZero();
        // The server's write for the first eviction (1 allowed, web-0 disrupted): web-1's is still to come.
        assertThat(allowed(spent.applyTo(List.of(budget(1, Map.of("web-0", "t"))), T0.plusSeconds(1)))).isZero();
        assertThat(spent.unsettled("shop/web-pdb")).isEqualTo(1);
        // The write for the second: the version shows both, nothing more is subtracted.
        assertThat(allowed(spent.applyTo(List.of(budget(0, Map.of("web-0", "t", "web-1", "t"))), T0.plusSeconds(1)))).isZero();
        assertThat(spent.unsettled("shop/web-pdb")).isZero();
        // The disruption controller saw the replacements Ready: the budget is read as it is.
        assertThat(allowed(spent.applyTo(List.of(budget(2, Map.of())), T0.plusSeconds(2)))).isEqualTo(2);
    }

    @Test
    void everyDeliveredVersionSettlesEvenWhenTheControllerDropsThePodsBeforeTheNextPlanOrItArrivesBeforeTheAnswer() {
        SpentBudgets spent = new SpentBudgets();
        PodDisruptionBudget seen = budget(2, Map.of());
        // The version naming web-0 arrives before the eviction's answer is recorded.
        spent.observed(budget(1, Map.of("web-0", "t")));
        spent.spent(pod("web-0", true), List.of(seen), T0);
        spent.spent(pod("web-1", true), List.of(seen), T0);
        spent.observed(budget(0, Map.of("web-0", "t", "web-1", "t")));

        // The controller has dropped both pods again by the time the drain plans: nothing counts any more.
        assertThat(allowed(spent.applyTo(List.of(budget(2, Map.of())), T0.plusSeconds(1)))).isEqualTo(2);
        assertThat(spent.unsettled("shop/web-pdb")).isZero();
    }

    @Test
    void anEvictionNoVersionShowsStopsCountingAfterAWhile() {
        SpentBudgets spent = new SpentBudgets();
        PodDisruptionBudget seen = budget(2, Map.of());
        spent.spent(pod("web-0", true), List.of(seen), T0);

        assertThat(allowed(spent.applyTo(List.of(seen), T0.plus(SpentBudgets.FORGET_AFTER).minusMillis(1)))).isEqualTo(1);
        assertThat(allowed(spent.applyTo(List.of(seen), T0.plus(SpentBudgets.FORGET_AFTER)))).isEqualTo(2);
    }

    @Test
    void podsTheServerEvictsWithoutTheBudgetAndUntrustedBudgetsSpendNothing() {
        SpentBudgets spent = new SpentBudgets();
        PodDisruptionBudget seen = budget(2, Map.of());
        spent.spent(pod("web-0", false), List.of(seen), T0);
        PodDisruptionBudget stale = new PodDisruptionBudgetBuilder(seen).editMetadata().withGeneration(3L).endMetadata().build();
        spent.spent(pod("web-1", true), List.of(stale), T0);

        assertThat(spent.unsettled("shop/web-pdb")).isZero();
        assertThat(allowed(spent.applyTo(List.of(seen), T0))).isEqualTo(2);
    }

    @Test
    void aBudgetLoosensWhenItAllowsMoreOrItsStatusCatchesUpWithItsSpec() {
        assertThat(DisruptionBudgets.loosened(budget(0, Map.of()), budget(2, Map.of()))).isTrue();
        assertThat(DisruptionBudgets.loosened(budget(2, Map.of()), budget(1, Map.of("web-0", "t")))).isFalse();
        assertThat(DisruptionBudgets.loosened(budget(1, Map.of()), budget(1, Map.of()))).isFalse();
        PodDisruptionBudget specChanged = new PodDisruptionBudgetBuilder(budget(0, Map.of())).editMetadata().withGeneration(2L).endMetadata().build();
        PodDisruptionBudget caughtUp = new PodDisruptionBudgetBuilder(specChanged).editStatus().withObservedGeneration(2L).endStatus().build();
        assertThat(DisruptionBudgets.loosened(specChanged, caughtUp)).isTrue();
    }

    private static int allowed(List<PodDisruptionBudget> budgets) {
        return budgets.get(0).getStatus().getDisruptionsAllowed();
    }

    private static Pod pod(String name, boolean ready) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).addToLabels("app", "web").endMetadata()
                .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus()
                .build();
    }

    private static PodDisruptionBudget budget(int disruptionsAllowed, Map<String, String> disruptedPods) {
        return new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace("shop").withName("web-pdb").withGeneration(1L).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .withNewStatus().withDisruptionsAllowed(disruptionsAllowed).withObservedGeneration(1L).withDisruptedPods(disruptedPods)
                .withCurrentHealthy(10).withDesiredHealthy(8).withExpectedPods(10).endStatus()
                .build();
    }
}
