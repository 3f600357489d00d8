package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;

/**
 * What draining a set of nodes would run into, predicted from their pods, the pod filters, dry-run
 * evictions, PodDisruptionBudget status and where the evicted pods' replacements could be scheduled.
 * Pure. Budgets are counted across the nodes drained together: two nodes each losing one pod of a
 * budget that allows one disruption need two; drained one at a time, they need one each.
 *
 * <p>A budget that allows fewer disruptions than the drain needs lets the rest go only as replacements
 * become Ready elsewhere. When those replacements cannot be scheduled anywhere (pinned to the nodes
 * being drained, no room, a taint they do not tolerate…) the drain is blocked, not slowed.
 */
public final class PreflightPrediction {
    /**
     * Where the replacements of evicted pods could run, and the workload each pod belongs to.
     *
     * @param byPod per pod (namespace/name) the drain would evict
     * @param workloadByPod e.g. {@code Deployment shop/web}, per pod; a pod missing here is named itself
     */
    public record Replacements(Map<String, ReplacementPlacement.Verdict> byPod, Map<String, String> workloadByPod) {
        public static Replacements notChecked() {
            return new Replacements(Map.of(), Map.of());
        }

        String workload(String pod) {
            return workloadByPod.getOrDefault(pod, "pod " + pod);
        }

        boolean placed(String pod) {
            return !(byPod.get(pod) instanceof ReplacementPlacement.Nowhere);
        }
    }

    /**
     * A budget the drain would need more disruptions from than it allows now.
     *
     * @param unschedulable why the replacements this budget waits for cannot be scheduled; null when they can
     */
    public record BudgetPressure(BudgetNumbers numbers, Map<String, List<String>> podsByNode, boolean blocks, String unschedulable) {
        public int podsToLose() {
            return podsByNode.values().stream().mapToInt(List::size).sum();
        }

        public String describe() {
            String pods = podsByNode.entrySet().stream()
                    .map(e -> e.getValue().size() + " on " + e.getKey()).collect(Collectors.joining(", "));
            String head = numbers.describe() + "; the drain would evict " + podsToLose() + " of its pods (" + pods + ")";
            if (unschedulable != null) {
                return head + ": blocked, because " + unschedulable;
            }
            return head + (blocks ? ": blocked until more of its pods are healthy"
                    : ": evictions will wait for replacements to become Ready on other nodes");
        }
    }

    /**
     * @param refusedByNode per node, pods a filter refuses
     * @param budgets the budgets involved
     * @param homeless per workload whose evicted pods' replacements cannot be scheduled, why (a budget may not need them)
     * @param awaitedByNode per node, pods the drain will wait for (annotated wait-completed); they slow it, they do not block it
     */
    public record Report(Map<String, List<String>> refusedByNode, List<BudgetPressure> budgets, Map<String, String> homeless,
            Map<String, List<String>> awaitedByNode) {
        public Report(Map<String, List<String>> refusedByNode, List<BudgetPressure> budgets) {
            this(refusedByNode, budgets, Map.of(), Map.of());
        }

        /** True when the drain, as things stand, cannot finish. */
        public boolean predictsBlock() {
            return refusedByNode.values().stream().anyMatch(r -> !r.isEmpty()) || budgets.stream().anyMatch(BudgetPressure::blocks);
        }

        public String describe() {
            List<String> lines = new ArrayList<>();
            refusedByNode.forEach((node, reasons) -> reasons.forEach(r -> lines.add("* node " + node + ": " + r)));
            budgets.forEach(b -> lines.add("* " + b.describe()));
            homeless.forEach((workload, why) -> lines.add("* " + workload + " would run short: its evicted pods cannot be replaced, " + why));
            awaitedByNode.forEach((node, reasons) -> reasons.forEach(r -> lines.add("* node " + node + ": " + r)));
            return lines.isEmpty() ? "Preflight found nothing that would block the drain."
                    : (predictsBlock() ? "Preflight predicts the drain will be blocked:\n" : "Preflight predicts the drain will be slowed:\n")
                            + String.join("\n", lines);
        }
    }

    private PreflightPrediction() {
    }

    /** The pods bound to each node, from one list of every pod. */
    public static Map<String, List<Pod>> podsByNode(List<Pod> allPods) {
        Map<String, List<Pod>> byNode = new LinkedHashMap<>();
        allPods.stream().filter(p -> p.getSpec() != null && p.getSpec().getNodeName() != null)
                .forEach(p -> byNode.computeIfAbsent(p.getSpec().getNodeName(), n -> new ArrayList<>()).add(p));
        return byNode;
    }

    /** Each node's pods with the filters' verdicts, in the order of the nodes given. */
    public static Map<String, Map<Pod, PodVerdict>> verdicts(Collection<String> nodes, Map<String, List<Pod>> podsByNode, PodFilters filters) {
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        for (String node : nodes) {
            Map<Pod, PodVerdict> byPod = new LinkedHashMap<>();
            podsByNode.getOrDefault(node, List.of()).forEach(pod -> byPod.put(pod, filters.verdict(pod)));
            verdicts.put(node, byPod);
        }
        return verdicts;
    }

    /** Per node, the pods the drain would evict (not those already being deleted); nodes with none are left out. */
    public static Map<String, List<Pod>> evicted(Map<String, Map<Pod, PodVerdict>> verdicts) {
        Map<String, List<Pod>> evictedByNode = new LinkedHashMap<>();
        verdicts.forEach((node, pods) -> pods.forEach((pod, verdict) -> {
            if (verdict.action() == PodVerdict.Action.EVICT && pod.getMetadata().getDeletionTimestamp() == null) {
                evictedByNode.computeIfAbsent(node, n -> new ArrayList<>()).add(pod);
            }
        }));
        return evictedByNode;
    }

    /**
     * Where each evicted pod's replacement could go while its group of nodes is drained, and the workload it belongs to.
     *
     * @param workloadOf e.g. {@code Deployment shop/web} for a pod
     */
    public static Replacements replacements(Map<String, List<Pod>> evictedByNode, Draining draining, List<Node> allNodes, List<Pod> allPods,
            Function<Pod, String> workloadOf) {
        Map<String, ReplacementPlacement.Verdict> byPod = new LinkedHashMap<>();
        if (draining == Draining.TOGETHER) {
            byPod.putAll(ReplacementPlacement.place(evictedByNode.values().stream().flatMap(List::stream).toList(), evictedByNode.keySet(),
                    allNodes, allPods));
        } else {
            evictedByNode.forEach((node, pods) -> byPod.putAll(ReplacementPlacement.place(pods, Set.of(node), allNodes, allPods)));
        }
        Map<String, String> workloads = new java.util.HashMap<>();
        evictedByNode.values().stream().flatMap(List::stream).forEach(pod -> workloads.put(PodFilters.name(pod), workloadOf.apply(pod)));
        return new Replacements(byPod, workloads);
    }

    /**
     * @param verdicts each node's pods with their filter verdicts
     * @param dryRuns the dry-run eviction answer of each pod the drain would evict, by namespace/name
     * @param draining whether the nodes are drained together (their budgets are shared) or one at a time
     */
    public static Report predict(Map<String, Map<Pod, PodVerdict>> verdicts, List<PodDisruptionBudget> budgets, Map<String, Answer> dryRuns,
            Draining draining, Replacements replacements) {
        Map<String, List<String>> refused = new TreeMap<>();
        Map<String, Map<String, List<String>>> lossesByBudget = new LinkedHashMap<>();
        Map<String, Boolean> dryRunBlocked = new LinkedHashMap<>();
        Map<String, PodDisruptionBudget> budgetByRef = new LinkedHashMap<>();
        budgets.forEach(b -> budgetByRef.put(b.getMetadata().getNamespace() + "/" + b.getMetadata().getName(), b));
        Map<String, String> homeless = new TreeMap<>();
        Map<String, List<String>> awaited = new TreeMap<>();
        verdicts.forEach((node, pods) -> {
            refused.put(node, new ArrayList<>());
            pods.forEach((pod, verdict) -> {
                if (verdict.action() == PodVerdict.Action.REFUSE) {
                    refused.get(node).add(verdict.reason());
                    return;
                }
                if (verdict.action() == PodVerdict.Action.WAIT) {
                    awaited.computeIfAbsent(node, n -> new ArrayList<>()).add(verdict.reason());
                    return;
                }
                if (verdict.action() != PodVerdict.Action.EVICT || pod.getMetadata().getDeletionTimestamp() != null) {
                    return;
                }
                String podRef = PodFilters.name(pod);
                if (replacements.byPod().get(podRef) instanceof ReplacementPlacement.Nowhere nowhere && PodFilters.controllerOf(pod) != null) {
                    homeless.putIfAbsent(replacements.workload(podRef), nowhere.why());
                }
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
        Set<String> explained = new java.util.HashSet<>();
        lossesByBudget.forEach((budgetRef, podsByNode) -> {
            BudgetNumbers numbers = DisruptionBudgets.numbers(budgetByRef.get(budgetRef));
            // Drained one at a time, a node's pods are all the budget loses at once: the pods of a node drained
            // before are back (replaced) when the next is drained.
            int losing = draining == Draining.TOGETHER ? podsByNode.values().stream().mapToInt(List::size).sum()
                    : podsByNode.values().stream().mapToInt(List::size).max().orElse(0);
            String unschedulable = unschedulableReplacements(numbers, podsByNode, draining, replacements);
            boolean blocks = numbers.disruptionsAllowed() == 0 || dryRunBlocked.getOrDefault(budgetRef, false) || unschedulable != null;
            if (blocks || losing > numbers.disruptionsAllowed()) {
                pressures.add(new BudgetPressure(numbers, podsByNode, blocks, unschedulable));
                if (unschedulable != null) {
                    podsByNode.values().forEach(pods -> pods.forEach(p -> explained.add(replacements.workload(p))));
                }
            }
        });
        explained.forEach(homeless::remove);
        return new Report(refused, pressures, homeless, awaited);
    }

    /**
     * Past its allowed disruptions, a budget lets one more pod go for each replacement that became Ready.
     * Null when enough replacements can be scheduled; else a sentence naming the workload and the
     * scheduler's reason. Per group of nodes drained together.
     */
    private static String unschedulableReplacements(BudgetNumbers numbers, Map<String, List<String>> podsByNode, Draining draining,
            Replacements replacements) {
        List<List<String>> groups = draining == Draining.TOGETHER
                ? List.of(podsByNode.values().stream().flatMap(List::stream).toList())
                : List.copyOf(podsByNode.values());
        for (List<String> group : groups) {
            int needed = group.size() - Math.max(0, numbers.disruptionsAllowed());
            List<String> stuck = group.stream().filter(p -> !replacements.placed(p)).toList();
            if (needed > 0 && group.size() - stuck.size() < needed) {
                String pod = stuck.get(0);
                String why = ((ReplacementPlacement.Nowhere) replacements.byPod().get(pod)).why();
                return needed + " of them can only go once replacements are Ready, and no replacement of " + replacements.workload(pod)
                        + " can be scheduled: " + why;
            }
        }
        return null;
    }
}
