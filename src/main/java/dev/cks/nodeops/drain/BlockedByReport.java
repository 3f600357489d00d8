package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * What keeps a node from being drained, as users read it in conditions and events: the pods still
 * there grouped by cause, PDB blocks with the PDB's numbers (like Cluster API's drain condition), and
 * the tail of the last API error. Pure: plain data in, text out.
 */
public final class BlockedByReport {
    public static final int MAX_API_ERROR = 2000;
    private static final int MAX_PODS_PER_GROUP = 5;

    public enum Cause {
        /** Eviction answered 429 because a PodDisruptionBudget allows no disruption now. */
        DISRUPTION_BUDGET,
        /** Evicted (or deleted) but still there, e.g. held by a finalizer or a long grace period. */
        TERMINATING,
        /** A pod filter refused it; the detail says which option overrides that. */
        REFUSED,
        /** The API server answered something else than success, 404 or a PDB's 429. */
        API_ERROR,
        /** Evictable now (a dry run says so), but the attempt ended before its eviction went through. */
        NOT_EVICTED_IN_TIME,
        /** Annotated wait-completed: left to finish its work; the drain is done when it has completed. */
        AWAITING_COMPLETION,
        /** Its drain-order is higher than that of pods still on the node: evicted once they are gone. */
        LATER_ORDER
    }

    /**
     * @param detail for DISRUPTION_BUDGET the budget's namespace/name (or the API's message when no budget
     *     could be matched), for TERMINATING how long ago it was deleted and what holds it, for REFUSED the
     *     filter's sentence, for API_ERROR the status code and message
     */
    public record StuckPod(String namespace, String name, Cause cause, String detail) {
        static StuckPod of(Pod pod, Cause cause, String detail) {
            return new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), cause, detail);
        }

        String ref() {
            return namespace + "/" + name;
        }
    }

    /** A PodDisruptionBudget's status numbers as the disruption controller computed them. */
    public record BudgetNumbers(String namespace, String name, int desiredHealthy, int currentHealthy, int disruptionsAllowed, int expectedPods) {
        public String ref() {
            return namespace + "/" + name;
        }

        public String describe() {
            return "pdb " + ref() + ": needs " + desiredHealthy + " healthy, has " + currentHealthy + ", "
                    + disruptionsAllowed + (disruptionsAllowed == 1 ? " disruption" : " disruptions") + " allowed";
        }
    }

    private BlockedByReport() {
    }

    /**
     * @param budgets by namespace/name, for DISRUPTION_BUDGET pods whose detail names one
     * @return empty when nothing is stuck
     */
    public static String format(String node, List<StuckPod> stuck, Map<String, BudgetNumbers> budgets, String lastApiError) {
        if (stuck.isEmpty() && (lastApiError == null || lastApiError.isBlank())) {
            return "";
        }
        List<String> lines = new ArrayList<>();
        lines.add("Node " + node + " still has " + stuck.size() + (stuck.size() == 1 ? " pod" : " pods") + " that could not be drained:");
        budgetHolds(stuck, budgets).forEach(hold -> lines.add("* " + hold.describe()));
        List<StuckPod> terminating = stuck.stream().filter(p -> p.cause() == Cause.TERMINATING).toList();
        if (!terminating.isEmpty()) {
            lines.add("* terminating (use skipWaitForDeleteTimeoutSeconds to stop waiting for them): "
                    + terminating.stream().limit(MAX_PODS_PER_GROUP).map(p -> p.ref() + " (" + p.detail() + ")").collect(Collectors.joining(", "))
                    + more(terminating));
        }
        stuck.stream().filter(p -> p.cause() == Cause.REFUSED).map(p -> "* " + p.detail()).forEach(lines::add);
        List<StuckPod> failed = stuck.stream().filter(p -> p.cause() == Cause.API_ERROR).toList();
        if (!failed.isEmpty()) {
            lines.add("* API error: " + failed.stream().limit(MAX_PODS_PER_GROUP).map(p -> p.ref() + " (" + p.detail() + ")")
                    .collect(Collectors.joining(", ")) + more(failed));
        }
        List<StuckPod> awaited = stuck.stream().filter(p -> p.cause() == Cause.AWAITING_COMPLETION).toList();
        if (!awaited.isEmpty()) {
            lines.add("* waiting for pods annotated nodeops.cks.dev/drain: wait-completed to complete: " + names(awaited));
        }
        List<StuckPod> ordered = stuck.stream().filter(p -> p.cause() == Cause.LATER_ORDER).toList();
        if (!ordered.isEmpty()) {
            lines.add("* evicted once the pods before them are gone: " + ordered.stream().limit(MAX_PODS_PER_GROUP)
                    .map(p -> p.ref() + " (" + p.detail() + ")").collect(Collectors.joining(", ")) + more(ordered));
        }
        List<StuckPod> late = stuck.stream().filter(p -> p.cause() == Cause.NOT_EVICTED_IN_TIME).toList();
        if (!late.isEmpty()) {
            lines.add("* evictable now, but not evicted before the attempt ended (a longer timeoutSeconds or another attempt would take them): "
                    + names(late));
        }
        if (lastApiError != null && !lastApiError.isBlank()) {
            lines.add("Last API error: " + tail(lastApiError));
        }
        return String.join("\n", lines);
    }

    /**
     * Pods a PodDisruptionBudget keeps on the node, one entry per budget (or per 429 whose budget is
     * unknown), in the order the pods were seen.
     */
    public static List<BudgetHold> budgetHolds(List<StuckPod> stuck, Map<String, BudgetNumbers> budgets) {
        Map<String, List<StuckPod>> byBudget = stuck.stream().filter(p -> p.cause() == Cause.DISRUPTION_BUDGET)
                .collect(Collectors.groupingBy(StuckPod::detail, LinkedHashMap::new, Collectors.toList()));
        List<BudgetHold> holds = new ArrayList<>();
        byBudget.forEach((budget, pods) -> {
            BudgetNumbers numbers = budgets.get(budget);
            String head = numbers != null ? numbers.describe() : "eviction refused with 429 (" + budget + ")";
            holds.add(new BudgetHold(budget, head + " (pods " + names(pods) + ")"));
        });
        return holds;
    }

    /**
     * What one budget holds back.
     *
     * @param budget the budget's namespace/name, or the API's message when a 429 named none: what stays the same while it blocks
     * @param describe the budget's numbers and the pods it holds, e.g. {@code pdb shop/web: needs 3 healthy, has 3, 0 disruptions allowed (pods shop/web-1)}
     */
    public record BudgetHold(String budget, String describe) {
    }

    /** The last {@value #MAX_API_ERROR} characters: an error's end usually says the most. */
    public static String tail(String text) {
        if (text == null) {
            return null;
        }
        return text.length() <= MAX_API_ERROR ? text : "…" + text.substring(text.length() - (MAX_API_ERROR - 1));
    }

    private static String names(List<StuckPod> pods) {
        return pods.stream().limit(MAX_PODS_PER_GROUP).map(StuckPod::ref).collect(Collectors.joining(", ")) + more(pods);
    }

    private static String more(List<StuckPod> pods) {
        return pods.size() > MAX_PODS_PER_GROUP ? " and " + (pods.size() - MAX_PODS_PER_GROUP) + " more" : "";
    }
}
