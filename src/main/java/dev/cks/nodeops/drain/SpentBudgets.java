package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

/**
 * Evictions the API server accepted that a watched budget does not show yet. A watch's copy of a budget
 * lags the server: right after our evictions it may still show the {@code disruptionsAllowed} we just
 * spent, and planning on it would send evictions the server refuses with 429. The eviction handler
 * records each pod it evicts in the budget's {@code status.disruptedPods} in the same write that lowers
 * {@code disruptionsAllowed}, so an eviction counts against the budget until a version of it that names
 * the pod arrives (from then on that version, or a later one, holds the decrement). Pure: not thread-safe,
 * the owner serialises calls.
 */
final class SpentBudgets {
    /**
     * An eviction the budget never shows (the server evicted the pod without consulting the budget, or
     * the watch skipped that version after a relist) stops counting after this long: the budget is read as
     * the watch shows it, and the server still decides.
     */
    static final Duration FORGET_AFTER = Duration.ofSeconds(10);

    /** Per budget (namespace/name): the pods evicted under it that no version seen so far names, with when. */
    private final Map<String, Map<String, Instant>> unsettled = new HashMap<>();

    /** Per budget: the pods any version delivered so far named in status.disruptedPods. */
    private final Map<String, java.util.Set<String>> shown = new HashMap<>();

    /** The server accepted the pod's eviction; it used one disruption of each trusted budget covering it. */
    void spent(Pod pod, List<PodDisruptionBudget> budgets, Instant now) {
        if (EvictionRound.evictionIgnoresBudgets(pod)) {
            return;
        }
        for (PodDisruptionBudget budget : DisruptionBudgets.covering(pod, budgets)) {
            String ref = EvictionRound.ref(budget);
            // The watch may deliver the version naming the pod before the eviction's answer arrives here.
            if (EvictionRound.trusted(budget) && !shown.getOrDefault(ref, java.util.Set.of()).contains(pod.getMetadata().getName())) {
                unsettled.computeIfAbsent(ref, b -> new HashMap<>()).put(pod.getMetadata().getName(), now);
            }
        }
    }

    /**
     * A version of a budget the watch delivered: the evictions it names are settled. Every version counts,
     * not only the one a step plans on: by then the disruption controller may have dropped the pods again.
     */
    void observed(PodDisruptionBudget budget) {
        if (budget.getStatus() == null || budget.getStatus().getDisruptedPods() == null) {
            return;
        }
        String ref = EvictionRound.ref(budget);
        shown.computeIfAbsent(ref, b -> new java.util.HashSet<>()).addAll(budget.getStatus().getDisruptedPods().keySet());
        Map<String, Instant> pods = unsettled.get(ref);
        if (pods != null) {
            pods.keySet().removeAll(budget.getStatus().getDisruptedPods().keySet());
        }
    }

    /**
     * The budgets as planning may read them: each trusted one's {@code disruptionsAllowed} lowered by the
     * evictions it does not show yet. Forgets what a budget shows or what is older than {@link #FORGET_AFTER}.
     */
    List<PodDisruptionBudget> applyTo(List<PodDisruptionBudget> budgets, Instant now) {
        return budgets.stream().map(budget -> {
            Map<String, Instant> pods = unsettled.get(EvictionRound.ref(budget));
            if (pods == null) {
                return budget;
            }
            Map<String, ?> shown = budget.getStatus() == null || budget.getStatus().getDisruptedPods() == null ? Map.of()
                    : budget.getStatus().getDisruptedPods();
            pods.entrySet().removeIf(e -> shown.containsKey(e.getKey()) || !now.isBefore(e.getValue().plus(FORGET_AFTER)));
            if (pods.isEmpty()) {
                unsettled.remove(EvictionRound.ref(budget));
                return budget;
            }
            if (!EvictionRound.trusted(budget)) {
                return budget;
            }
            int allowed = Math.max(0, budget.getStatus().getDisruptionsAllowed() - pods.size());
            return new PodDisruptionBudgetBuilder(budget).editStatus().withDisruptionsAllowed(allowed).endStatus().build();
        }).toList();
    }

    /** How many evictions count against the budget (namespace/name) now; for tests and the report. */
    int unsettled(String budget) {
        return unsettled.getOrDefault(budget, Map.of()).size();
    }
}
