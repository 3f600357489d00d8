package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

class EvictionRoundTest {
    @Test
    void sendsAtMostWhatEachBudgetAllowsAndHoldsBackTheRest() {
        List<Pod> due = new ArrayList<>();
        due.addAll(pods("shop", "web", 5));
        due.addAll(pods("shop", "db", 3));
        PodDisruptionBudget web = budget("shop", "web-pdb", "web", 2, 1L, 1L);
        PodDisruptionBudget db = budget("shop", "db-pdb", "db", 0, 4L, 4L);

        EvictionRound.Plan plan = EvictionRound.plan(due, List.of(web, db));

        assertThat(names(plan.evictNow())).containsExactly("web-0", "web-1");
        assertThat(plan.heldBack()).hasSize(6);
        assertThat(plan.heldBack().values()).containsOnly("shop/web-pdb", "shop/db-pdb");
        assertThat(plan.heldBack().entrySet()).filteredOn(e -> e.getKey().getMetadata().getName().startsWith("db-"))
                .allMatch(e -> e.getValue().equals("shop/db-pdb")).hasSize(3);
        assertThat(plan.allowanceLeft()).containsExactlyInAnyOrderEntriesOf(Map.of("shop/web-pdb", 0, "shop/db-pdb", 0));
    }

    @Test
    void podsNoBudgetCoversGoAtOnce() {
        List<Pod> due = new ArrayList<>(pods("shop", "cache", 4));
        due.addAll(pods("other", "web", 2));
        // Same selector, other namespace: it covers none of these pods.
        PodDisruptionBudget web = budget("shop", "web-pdb", "web", 0, 1L, 1L);

        EvictionRound.Plan plan = EvictionRound.plan(due, List.of(web));

        assertThat(plan.evictNow()).hasSize(6);
        assertThat(plan.heldBack()).isEmpty();
    }

    @Test
    void aPodUnderTwoBudgetsGoesOnlyWhenBothAllowItAndUsesOneOfEach() {
        List<Pod> due = pods("shop", "web", 3);
        PodDisruptionBudget loose = budget("shop", "web-loose", "web", 5, 1L, 1L);
        PodDisruptionBudget tight = budget("shop", "web-tight", "web", 1, 1L, 1L);

        EvictionRound.Plan plan = EvictionRound.plan(due, List.of(loose, tight));

        assertThat(names(plan.evictNow())).containsExactly("web-0");
        assertThat(plan.heldBack().values()).containsOnly("shop/web-tight");
        assertThat(plan.allowanceLeft()).containsEntry("shop/web-loose", 4).containsEntry("shop/web-tight", 0);
    }

    @Test
    void staleOrMissingStatusIsNotTrustedAndTheServerDecides() {
        List<Pod> due = new ArrayList<>(pods("shop", "web", 2));
        due.addAll(pods("shop", "db", 2));
        due.addAll(pods("shop", "api", 2));
        // Spec changed (generation 3) since the controller last computed the status (generation 2).
        PodDisruptionBudget stale = budget("shop", "web-pdb", "web", 0, 3L, 2L);
        PodDisruptionBudget noStatus = new PodDisruptionBudgetBuilder(budget("shop", "db-pdb", "db", 0, 1L, 1L)).withStatus(null).build();
        PodDisruptionBudget noObservedGeneration = budget("shop", "api-pdb", "api", 0, 1L, null);

        EvictionRound.Plan plan = EvictionRound.plan(due, List.of(stale, noStatus, noObservedGeneration));

        assertThat(plan.evictNow()).hasSize(6);
        assertThat(plan.heldBack()).isEmpty();
        assertThat(EvictionRound.trusted(budget("shop", "x", "x", 0, 2L, 3L))).as("observed a newer generation than the listed one").isTrue();
    }

    @Test
    void aTrustedBudgetStillLimitsAPodThatAStaleOneAlsoCovers() {
        List<Pod> due = pods("shop", "web", 2);
        PodDisruptionBudget stale = budget("shop", "web-old", "web", 0, 2L, 1L);
        PodDisruptionBudget fresh = budget("shop", "web-pdb", "web", 1, 1L, 1L);

        EvictionRound.Plan plan = EvictionRound.plan(due, List.of(stale, fresh));

        assertThat(names(plan.evictNow())).containsExactly("web-0");
        assertThat(plan.heldBack().values()).containsExactly("shop/web-pdb");
    }

    @Test
    void podsThatAreNotReadyAreSentEvenWhenTheBudgetAllowsNothing() {
        Pod pending = new PodBuilder(pod("shop", "web", "web-pending", false)).editStatus().withPhase("Pending").endStatus().build();
        Pod unready = pod("shop", "web", "web-unready", false);
        Pod finished = new PodBuilder(pod("shop", "web", "web-done", false)).editStatus().withPhase("Succeeded").endStatus().build();
        Pod ready = pod("shop", "web", "web-ready", true);
        PodDisruptionBudget web = budget("shop", "web-pdb", "web", 0, 1L, 1L);

        EvictionRound.Plan plan = EvictionRound.plan(List.of(pending, unready, finished, ready), List.of(web));

        assertThat(names(plan.evictNow())).as("the server evicts these without using the allowance").containsExactly("web-pending", "web-unready", "web-done");
        assertThat(names(List.copyOf(plan.heldBack().keySet()))).containsExactly("web-ready");
    }

    @Test
    void aNegativeOrZeroAllowanceSendsNothingAndNothingDueIsAnEmptyPlan() {
        PodDisruptionBudget web = budget("shop", "web-pdb", "web", -1, 1L, 1L);
        assertThat(EvictionRound.plan(pods("shop", "web", 2), List.of(web)).evictNow()).isEmpty();
        EvictionRound.Plan empty = EvictionRound.plan(List.of(), List.of(web));
        assertThat(empty.evictNow()).isEmpty();
        assertThat(empty.heldBack()).isEmpty();
    }

    @Test
    void looksAgainWithinASecondWhileABudgetCanLoosenAndLaterWhenItCannot() {
        BudgetNumbers waitingForReplacements = new BudgetNumbers("shop", "web-pdb", 18, 18, 0, 20);
        BudgetNumbers fullButAllowingNothing = new BudgetNumbers("shop", "db-pdb", 3, 3, 0, 3);

        assertThat(EvictionRound.nextLook(false, false, List.of(waitingForReplacements), false)).isEqualTo(NodeDrainer.RECHECK_DISRUPTION_BUDGETS);
        assertThat(EvictionRound.nextLook(false, false, List.of(fullButAllowingNothing), true))
                .as("its own pods are leaving, so it loosens once replacements are Ready").isEqualTo(NodeDrainer.RECHECK_DISRUPTION_BUDGETS);
        assertThat(EvictionRound.nextLook(false, false, List.of(fullButAllowingNothing), false))
                .as("nothing moves: it will not loosen by itself").isEqualTo(NodeDrainer.RETRY_BLOCKED_EVICTION);
        assertThat(EvictionRound.nextLook(false, false, java.util.Arrays.asList((BudgetNumbers) null), false))
                .as("numbers unknown").isEqualTo(NodeDrainer.RECHECK_DISRUPTION_BUDGETS);
        assertThat(EvictionRound.nextLook(false, true, List.of(), false)).as("a 429").isEqualTo(NodeDrainer.RECHECK_DISRUPTION_BUDGETS);
        assertThat(EvictionRound.nextLook(true, true, List.of(waitingForReplacements), true))
                .as("another API error is not repeated every second").isEqualTo(NodeDrainer.RETRY_BLOCKED_EVICTION);
        assertThat(EvictionRound.nextLook(false, false, List.of(), true)).as("only terminating").isEqualTo(NodeDrainer.CHECK_TERMINATING);
        assertThat(NodeDrainer.RECHECK_DISRUPTION_BUDGETS).isLessThan(NodeDrainer.RETRY_BLOCKED_EVICTION);
    }

    private static List<Pod> pods(String namespace, String app, int count) {
        List<Pod> pods = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            pods.add(pod(namespace, app, app + "-" + i, true));
        }
        return pods;
    }

    private static Pod pod(String namespace, String app, String name, boolean ready) {
        return new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name).addToLabels("app", app).endMetadata()
                .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus()
                .build();
    }

    private static PodDisruptionBudget budget(String namespace, String name, String app, int disruptionsAllowed, Long generation, Long observedGeneration) {
        return new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace(namespace).withName(name).withGeneration(generation).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
                .withNewStatus().withDisruptionsAllowed(disruptionsAllowed).withObservedGeneration(observedGeneration)
                .withCurrentHealthy(10).withDesiredHealthy(8).withExpectedPods(10).endStatus()
                .build();
    }

    private static List<String> names(List<Pod> pods) {
        return pods.stream().map(p -> p.getMetadata().getName()).toList();
    }
}
