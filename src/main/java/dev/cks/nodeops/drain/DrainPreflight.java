package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
        List<Pod> allPods = ListPages.all(client.pods().inAnyNamespace(), () -> { }, new LeanCopies()::pod);
        List<Node> allNodes = ListPages.all(client.nodes(), () -> { }, LeanCopies::node);
        Map<String, Map<Pod, PodVerdict>> verdicts = PreflightPrediction.verdicts(nodes, PreflightPrediction.podsByNode(allPods), filters);
        Map<String, List<Pod>> evictedByNode = PreflightPrediction.evicted(verdicts);
        // Plain deletes (disableEviction) bypass budgets, so none can block them.
        List<PodDisruptionBudget> budgets = Boolean.TRUE.equals(options.getDisableEviction()) ? List.of()
                : ListPages.all(client.policy().v1().podDisruptionBudget().inAnyNamespace());
        Map<String, String> replicaSetOwners = new HashMap<>();
        PreflightPrediction.Replacements replacements = PreflightPrediction.replacements(evictedByNode, draining, allNodes, allPods,
                pod -> workloadOf(pod, replicaSetOwners));
        // Missing answers read as "no answer" and do not count as blocks.
        boolean disableEviction = Boolean.TRUE.equals(options.getDisableEviction());
        Map<String, Answer> answers = new LinkedHashMap<>();
        EvictionApi.each(evictedByNode.values().stream().flatMap(List::stream).toList(),
                pod -> evictions.remove(NodeDrainer.refOf(pod), options.getGracePeriodSeconds(), true, disableEviction), DRY_RUN_TIMEOUT)
                .forEach((pod, answer) -> answers.put(PodFilters.name(pod), answer));
        return PreflightPrediction.predict(verdicts, budgets, answers, draining, replacements);
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
