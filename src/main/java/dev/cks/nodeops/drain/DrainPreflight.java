package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Before anything is cordoned: dry-run evictions (`dryRun=All`) of every pod the drain would remove,
 * the PodDisruptionBudgets' status, and where each evicted pod's replacement could be scheduled,
 * across all nodes of the operation. Evicts and cordons nothing.
 */
public final class DrainPreflight {
    private static final Duration DRY_RUN_TIMEOUT = Duration.ofSeconds(30);

    private final KubernetesClient client;
    private final EvictionApi evictions;

    public DrainPreflight(KubernetesClient client) {
        this.client = client;
        this.evictions = new EvictionApi(client);
    }

    /** @throws PodSelector.InvalidSelector when the podSelector cannot be parsed */
    public PreflightPrediction.Report check(List<String> nodes, Draining draining, DrainOptions options, Instant now) throws InterruptedException {
        PodFilters filters = PodFilters.forOptions(options, now);
        List<Pod> allPods = ListPages.all(client.pods().inAnyNamespace());
        List<Node> allNodes = ListPages.all(client.nodes());
        Map<String, Map<Pod, PodVerdict>> verdicts = new LinkedHashMap<>();
        Map<String, List<Pod>> evictedByNode = new LinkedHashMap<>();
        for (String node : nodes) {
            Map<Pod, PodVerdict> byPod = new LinkedHashMap<>();
            for (Pod pod : allPods.stream().filter(p -> p.getSpec() != null && node.equals(p.getSpec().getNodeName())).toList()) {
                PodVerdict verdict = filters.verdict(pod);
                byPod.put(pod, verdict);
                if (verdict.action() == PodVerdict.Action.EVICT && pod.getMetadata().getDeletionTimestamp() == null) {
                    evictedByNode.computeIfAbsent(node, n -> new ArrayList<>()).add(pod);
                }
            }
            verdicts.put(node, byPod);
        }
        // Plain deletes (disableEviction) bypass budgets, so none can block them.
        List<PodDisruptionBudget> budgets = Boolean.TRUE.equals(options.getDisableEviction()) ? List.of()
                : ListPages.all(client.policy().v1().podDisruptionBudget().inAnyNamespace());
        PreflightPrediction.Replacements replacements = replacements(evictedByNode, draining, allNodes, allPods);
        // Missing answers read as "no answer" and do not count as blocks.
        boolean disableEviction = Boolean.TRUE.equals(options.getDisableEviction());
        Map<String, Answer> answers = new LinkedHashMap<>();
        EvictionApi.each(evictedByNode.values().stream().flatMap(List::stream).toList(),
                pod -> evictions.remove(NodeDrainer.refOf(pod), options.getGracePeriodSeconds(), true, disableEviction), DRY_RUN_TIMEOUT)
                .forEach((pod, answer) -> answers.put(PodFilters.name(pod), answer));
        return PreflightPrediction.predict(verdicts, budgets, answers, draining, replacements);
    }

    /** Where each evicted pod's replacement could go while its group of nodes is drained, and the workload it belongs to. */
    private PreflightPrediction.Replacements replacements(Map<String, List<Pod>> evictedByNode, Draining draining, List<Node> allNodes,
            List<Pod> allPods) {
        Map<String, ReplacementPlacement.Verdict> byPod = new LinkedHashMap<>();
        if (draining == Draining.TOGETHER) {
            byPod.putAll(ReplacementPlacement.place(evictedByNode.values().stream().flatMap(List::stream).toList(), evictedByNode.keySet(),
                    allNodes, allPods));
        } else {
            evictedByNode.forEach((node, pods) -> byPod.putAll(ReplacementPlacement.place(pods, Set.of(node), allNodes, allPods)));
        }
        Map<String, String> workloads = new HashMap<>();
        Map<String, String> replicaSetOwners = new HashMap<>();
        evictedByNode.values().stream().flatMap(List::stream).forEach(pod -> workloads.put(PodFilters.name(pod), workloadOf(pod, replicaSetOwners)));
        return new PreflightPrediction.Replacements(byPod, workloads);
    }

    /** "Deployment ns/name" for a pod of a Deployment's ReplicaSet, else its controller, else the pod itself. */
    private String workloadOf(Pod pod, Map<String, String> replicaSetOwners) {
        String namespace = pod.getMetadata().getNamespace();
        OwnerReference controller = PodFilters.controllerOf(pod);
        if (controller == null) {
            return "pod " + PodFilters.name(pod);
        }
        if ("ReplicaSet".equals(controller.getKind())) {
            return replicaSetOwners.computeIfAbsent(namespace + "/" + controller.getName(), key -> {
                try {
                    ReplicaSet replicaSet = client.apps().replicaSets().inNamespace(namespace).withName(controller.getName()).get();
                    OwnerReference owner = replicaSet == null || replicaSet.getMetadata().getOwnerReferences() == null ? null
                            : replicaSet.getMetadata().getOwnerReferences().stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst().orElse(null);
                    return owner == null ? "ReplicaSet " + key : owner.getKind() + " " + namespace + "/" + owner.getName();
                } catch (KubernetesClientException unreadable) {
                    return "ReplicaSet " + key;
                }
            });
        }
        return controller.getKind() + " " + namespace + "/" + controller.getName();
    }
}
