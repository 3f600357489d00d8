package dev.cks.nodeops.drain;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;

/** Which PodDisruptionBudget covers a pod, and its numbers; pure functions over API objects. */
public final class DisruptionBudgets {
    // The eviction REST handler's cause message: "The disruption budget web-pdb needs 3 healthy pods and has 3 currently"
    // or "... web-pdb is still being processed by the server."
    private static final Pattern BUDGET_IN_MESSAGE = Pattern.compile("disruption budget (\\S+) (?:needs|is) ");

    private DisruptionBudgets() {
    }

    public static BlockedByReport.BudgetNumbers numbers(PodDisruptionBudget budget) {
        PodDisruptionBudgetStatus status = budget.getStatus();
        return new BlockedByReport.BudgetNumbers(budget.getMetadata().getNamespace(), budget.getMetadata().getName(),
                status == null || status.getDesiredHealthy() == null ? 0 : status.getDesiredHealthy(),
                status == null || status.getCurrentHealthy() == null ? 0 : status.getCurrentHealthy(),
                status == null || status.getDisruptionsAllowed() == null ? 0 : status.getDisruptionsAllowed(),
                status == null || status.getExpectedPods() == null ? 0 : status.getExpectedPods());
    }

    /**
     * The budget's numbers with {@code disruptionsAllowed} lowered by the evictions it covers: the API server
     * lowers it on each eviction it accepts, and a copy read before them does not show that yet.
     */
    public static BlockedByReport.BudgetNumbers numbersAfter(PodDisruptionBudget budget, List<Pod> evicted) {
        BlockedByReport.BudgetNumbers read = numbers(budget);
        long evictedUnder = evicted.stream().filter(p -> !EvictionRound.evictionIgnoresBudgets(p) && covering(p, List.of(budget)).size() == 1).count();
        return new BlockedByReport.BudgetNumbers(read.namespace(), read.name(), read.desiredHealthy(), read.currentHealthy(),
                (int) Math.max(0, read.disruptionsAllowed() - evictedUnder), read.expectedPods());
    }

    /** The budgets of the pod's namespace whose selector matches it (the API refuses evictions under more than one). */
    public static List<PodDisruptionBudget> covering(Pod pod, List<PodDisruptionBudget> budgets) {
        return budgets.stream()
                .filter(b -> b.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace()))
                .filter(b -> PodSelector.of(b.getSpec().getSelector()).matches(pod.getMetadata().getLabels()))
                .toList();
    }

    /**
     * Whether the newer version of a budget may let a held drain move on: it allows more disruptions than
     * the older one, or its status became one the drain trusts (computed for the current spec).
     */
    public static boolean loosened(PodDisruptionBudget older, PodDisruptionBudget newer) {
        return numbers(newer).disruptionsAllowed() > numbers(older).disruptionsAllowed()
                || EvictionRound.trusted(newer) && !EvictionRound.trusted(older);
    }

    /** The budget a 429's causes name, if they name one. */
    public static Optional<String> namedIn(List<String> causes) {
        for (String cause : causes) {
            Matcher matcher = BUDGET_IN_MESSAGE.matcher(cause);
            if (matcher.find()) {
                return Optional.of(matcher.group(1));
            }
        }
        return Optional.empty();
    }
}
