package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;

/**
 * What draining a set of nodes together would run into, predicted from their pods, the pod filters,
 * dry-run evictions and PodDisruptionBudget status. Pure. Budgets are counted across all nodes of the
 * operation: two nodes each losing one pod of a budget that allows one disruption need two.
 */
public final class PreflightPrediction {
    /** A budget the drain would need more disruptions from than it allows now. */
    public record BudgetPressure(BudgetNumbers numbers, Map<String, List<String>> podsByNode, boolean blocks) {
        public int podsToLose() {
            return podsByNode.values().stream().mapToInt(List::size).sum();
        }

        public String describe() {
            String pods = podsByNode.entrySet().stream()
                    .map(e -> e.getValue().size() + " on " + e.getKey()).collect(Collectors.joining(", "));
            return numbers.describe() + "; the drain would evict " + podsToLose() + " of its pods (" + pods + ")"
                    + (blocks ? ": blocked until more of its pods are healthy"
                            : ": evictions will wait for replacements to become Ready on other nodes");
        }
    }

    /** Per node: pods a filter refuses, and the budgets involved. */
    public record Report(Map<String, List<String>> refusedByNode, List<BudgetPressure> budgets) {
        /** True when the drain, as things stand, cannot finish. */
        public boolean predictsBlock() {
            return refusedByNode.values().stream().anyMatch(r -> !r.isEmpty()) || budgets.stream().anyMatch(BudgetPressure::blocks);
        }

        public String describe() {
            List<String> lines = new ArrayList<>();
            refusedByNode.forEach((node, reasons) -> reasons.forEach(r -> lines.add("* node " + node + ": " + r)));
            budgets.forEach(b -> lines.add("* " + b.describe()));
            return lines.isEmpty() ? "Preflight found nothing that would block the drain."
                    : (predictsBlock() ? "Preflight predicts the drain will be blocked:\n" : "Preflight predicts the drain will be slowed:\n")
                            + String.join("\n", lines);
        }
    }

    private PreflightPrediction() {
    }

    /**
     * @param verdicts each node's pods with their filter verdicts
     * @param dryRuns the dry-run eviction answer of each pod the drain would evict, by namespace/name
     */
    public static Report predict(Map<String, Map<Pod, PodVerdict>> verdicts, List<PodDisruptionBudget> budgets, Map<String, Answer> dryRuns) {
        Map<String, List<String>> refused = new TreeMap<>();
        Map<String, Map<String, List<String>>> lossesByBudget = new LinkedHashMap<>();
        Map<String, Boolean> dryRunBlocked = new LinkedHashMap<>();
        Map<String, PodDisruptionBudget> budgetByRef = new LinkedHashMap<>();
        budgets.forEach(b -> budgetByRef.put(b.getMetadata().getNamespace() + "/" + b.getMetadata().getName(), b));
        verdicts.forEach((node, pods) -> {
            refused.put(node, new ArrayList<>());
            pods.forEach((pod, verdict) -> {
                if (verdict.action() == PodVerdict.Action.REFUSE) {
                    refused.get(node).add(verdict.reason());
                    return;
                }
                if (verdict.action() != PodVerdict.Action.EVICT || pod.getMetadata().getDeletionTimestamp() != null) {
                    return;
                }
                String podRef = PodFilters.name(pod);
                Answer dryRun = dryRuns.get(podRef);
                for (PodDisruptionBudget budget : DisruptionBudgets.covering(pod, budgets)) {
                    String budgetRef = budget.getMetadata().getNamespace() + "/" + budget.getMetadata().getName();
                    lossesByBudget.computeIfAbsent(budgetRef, b -> new TreeMap<>()).computeIfAbsent(node, n -> new ArrayList<>()).add(podRef);
                    if (dryRun != null && dryRun.tooManyRequests()) {
                        dryRunBlocked.put(budgetRef, true);
                    }
                }
            });
        });
        List<BudgetPressure> pressures = new ArrayList<>();
        lossesByBudget.forEach((budgetRef, podsByNode) -> {
            BudgetNumbers numbers = DisruptionBudgets.numbers(budgetByRef.get(budgetRef));
            int losing = podsByNode.values().stream().mapToInt(List::size).sum();
            boolean blocks = numbers.disruptionsAllowed() == 0 || dryRunBlocked.getOrDefault(budgetRef, false);
            if (blocks || losing > numbers.disruptionsAllowed()) {
                pressures.add(new BudgetPressure(numbers, podsByNode, blocks));
            }
        });
        return new Report(refused, pressures);
    }
}
