package dev.cks.nodeops.drain;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;

/**
 * Which of the pods due for eviction to send in this round, given the PodDisruptionBudgets' status.
 * Pure: pods and budgets in, a plan out.
 *
 * <p>Why: sending every eviction at once makes the API server refuse all but {@code disruptionsAllowed}
 * of each budget with 429, and each refusal costs a request and, until now, a 5 s wait. Sending only
 * what the budgets allow costs no 429 for pods that could not go anyway, and lets the drain look again
 * within a second, when replacements becoming Ready have raised {@code disruptionsAllowed}.
 *
 * <p>The API server stays the authority: this only holds back pods whose eviction it would refuse
 * according to a status it has published; whatever is sent may still come back 429, and is handled as
 * before. Where the status cannot be trusted (not computed yet, or older than the budget's spec) or the
 * server would not consult the budget for the pod, the pod is sent and the server decides.
 */
public final class EvictionRound {
    /**
     * @param evictNow the pods to send now, in the order they were given
     * @param heldBack pods not sent because a budget allows no further disruption this round, with the
     *     namespace/name of that budget
     * @param allowanceLeft per trusted budget (namespace/name): disruptions it still allows after the pods
     *     in {@code evictNow} go
     */
    public record Plan(List<Pod> evictNow, Map<Pod, String> heldBack, Map<String, Integer> allowanceLeft) {
    }

    private EvictionRound() {
    }

    /**
     * @param due pods to be evicted, none of them terminating yet
     * @param budgets the budgets of (at least) the pods' namespaces
     */
    public static Plan plan(List<Pod> due, List<PodDisruptionBudget> budgets) {
        Map<String, Integer> allowanceLeft = new LinkedHashMap<>();
        for (PodDisruptionBudget budget : budgets) {
            if (trusted(budget)) {
                allowanceLeft.put(ref(budget), Math.max(0, budget.getStatus().getDisruptionsAllowed()));
            }
        }
        List<Pod> evictNow = new ArrayList<>();
        Map<Pod, String> heldBack = new LinkedHashMap<>();
        for (Pod pod : due) {
            if (evictionIgnoresBudgets(pod)) {
                evictNow.add(pod);
                continue;
            }
            // Several budgets: the pod may go only if every one of them still allows a disruption
            // (the tightest one decides), and then it uses one of each.
            List<String> limiting = DisruptionBudgets.covering(pod, budgets).stream()
                    .map(EvictionRound::ref).filter(allowanceLeft::containsKey).toList();
            String exhausted = limiting.stream().filter(b -> allowanceLeft.get(b) <= 0).findFirst().orElse(null);
            if (exhausted != null) {
                heldBack.put(pod, exhausted);
                continue;
            }
            limiting.forEach(b -> allowanceLeft.merge(b, -1, Integer::sum));
            evictNow.add(pod);
        }
        return new Plan(List.copyOf(evictNow), heldBack, allowanceLeft);
    }

    /**
     * How soon the drain looks again after a round.
     *
     * @param holdingBudgets the numbers of the budgets that held pods back this round (an element is null
     *     when its numbers are unknown); empty when none did
     * @param podsLeaving pods were evicted this round or are still terminating
     */
    public static Duration nextLook(boolean apiError, boolean refusedWith429, List<BudgetNumbers> holdingBudgets, boolean podsLeaving) {
        if (apiError) {
            // The longer interval, so that a failing request is not repeated every second.
            return NodeDrainer.RETRY_BLOCKED_EVICTION;
        }
        if (refusedWith429) {
            return NodeDrainer.RECHECK_DISRUPTION_BUDGETS;
        }
        if (holdingBudgets.isEmpty()) {
            return NodeDrainer.CHECK_TERMINATING;
        }
        // Pods on their way out, or replacements on their way in (fewer healthy pods than expected): the
        // budget's disruptionsAllowed rises as soon as the disruption controller sees replacements Ready.
        // A budget with all its pods healthy that still allows nothing (minAvailable equal to the
        // replicas) does not loosen by itself, so a one-second look would only cost requests.
        boolean mayLoosenSoon = podsLeaving || holdingBudgets.stream().anyMatch(n -> n == null || n.currentHealthy() < n.expectedPods());
        return mayLoosenSoon ? NodeDrainer.RECHECK_DISRUPTION_BUDGETS : NodeDrainer.RETRY_BLOCKED_EVICTION;
    }

    /**
     * A status the disruption controller computed for the budget's current spec. Without it (a new
     * budget, or a spec changed since) {@code disruptionsAllowed} may be wrong either way.
     */
    static boolean trusted(PodDisruptionBudget budget) {
        PodDisruptionBudgetStatus status = budget.getStatus();
        if (status == null || status.getDisruptionsAllowed() == null || status.getObservedGeneration() == null) {
            return false;
        }
        Long generation = budget.getMetadata().getGeneration();
        return generation == null || status.getObservedGeneration() >= generation;
    }

    /**
     * Only Ready pods use a budget's allowance. The API server evicts finished and Pending pods without
     * consulting budgets, and pods that are not Ready without using the allowance (when the budget has
     * its desired healthy pods, or its unhealthyPodEvictionPolicy is AlwaysAllow): holding them back
     * could stall a drain the server allows, so they are sent and the server decides.
     */
    static boolean evictionIgnoresBudgets(Pod pod) {
        return pod.getStatus() == null || pod.getStatus().getConditions() == null || pod.getStatus().getConditions().stream()
                .noneMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    static String ref(PodDisruptionBudget budget) {
        return budget.getMetadata().getNamespace() + "/" + Objects.requireNonNull(budget.getMetadata().getName());
    }
}
