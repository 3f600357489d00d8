package dev.cks.nodeops.drain;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Before anything is cordoned: dry-run evictions (`dryRun=All`) of every pod the drain would remove
 * and the PodDisruptionBudgets' status, across all nodes of the operation. Evicts and cordons nothing.
 */
public final class DrainPreflight {
    private static final long DRY_RUN_TIMEOUT_SECONDS = 30;

    private final KubernetesClient client;
    private final EvictionApi evictions;

    public DrainPreflight(KubernetesClient client) {
        this.client = client;
        this.evictions = new EvictionApi(client);
    }

    /** @throws PodSelector.InvalidSelector when the podSelector cannot be parsed */
    public PreflightPrediction.Report check(List<String> nodes, DrainOptions options, Instant now) throws InterruptedException {
        PodFilters filters = PodFilters.forOptions(options, now);
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        Map<String, CompletableFuture<Answer>> dryRuns = new LinkedHashMap<>();
        for (String node : nodes) {
            Map<Pod, PodVerdict> byPod = new LinkedHashMap<>();
            for (Pod pod : client.pods().inAnyNamespace().withField("spec.nodeName", node).list().getItems()) {
                PodVerdict verdict = filters.verdict(pod);
                byPod.put(pod, verdict);
                if (verdict.action() == PodVerdict.Action.EVICT && pod.getMetadata().getDeletionTimestamp() == null) {
                    dryRuns.put(PodFilters.name(pod), evictions.remove(NodeDrainer.refOf(pod), options.getGracePeriodSeconds(), true,
                            Boolean.TRUE.equals(options.getDisableEviction())));
                }
            }
            verdicts.put(node, byPod);
        }
        // Plain deletes (disableEviction) bypass budgets, so none can block them.
        List<PodDisruptionBudget> budgets = Boolean.TRUE.equals(options.getDisableEviction()) ? List.of()
                : client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems();
        try {
            CompletableFuture.allOf(dryRuns.values().toArray(CompletableFuture[]::new)).get(DRY_RUN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // Missing answers read as "no answer" and do not count as blocks.
        }
        Map<String, Answer> answers = new LinkedHashMap<>();
        dryRuns.forEach((pod, answer) -> answers.put(pod, answer.getNow(new Answer(0, "no answer", new ArrayList<>()))));
        return PreflightPrediction.predict(verdicts, budgets, answers);
    }
}
