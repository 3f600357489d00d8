package dev.cks.nodeops.drain;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Reads the PodDisruptionBudgets a drain step needs, from the node's watches when the step has them, else
 * by listing. A read that fails puts the error into the drain's state and answers null: the step goes on
 * without those budgets, and the API server decides as it always does.
 */
final class BudgetReader {
    /**
     * Up to this many namespaces, budgets are listed namespace by namespace (each answer holds only
     * budgets that can matter); beyond it one cluster-wide list is fewer requests.
     */
    static final int MAX_NAMESPACES_LISTED_ONE_BY_ONE = 3;

    private final KubernetesClient client;

    BudgetReader(KubernetesClient client) {
        this.client = client;
    }

    /**
     * The budgets of the pods' namespaces, per namespace: from the watch when there is one and it could watch
     * them all, else listed. Null when they could not be read.
     *
     * @param watch the node's watches; null: list
     */
    Map<String, List<PodDisruptionBudget>> ofPods(List<Pod> pods, DrainWatches.NodeWatch watch, DrainState state, Instant now) {
        Set<String> namespaces = new TreeSet<>();
        pods.forEach(p -> namespaces.add(p.getMetadata().getNamespace()));
        Map<String, List<PodDisruptionBudget>> watched = watch != null ? watched(watch, namespaces, state, now) : null;
        return watched != null ? watched : listed(namespaces, state);
    }

    /** The budgets of one namespace, listed; null when the list failed. */
    List<PodDisruptionBudget> ofNamespace(String namespace, DrainState state) {
        try {
            return client.policy().v1().podDisruptionBudget().inNamespace(namespace).list().getItems();
        } catch (KubernetesClientException e) {
            state.setLastApiError(BlockedByReport.tail("listing the PodDisruptionBudgets of namespace " + namespace + ": " + e.getMessage()));
            return null;
        }
    }

    /** Null when a watch of a new namespace could not start. */
    private static Map<String, List<PodDisruptionBudget>> watched(DrainWatches.NodeWatch watch, Set<String> namespaces, DrainState state,
            Instant now) {
        try {
            return watch.budgets(namespaces, now);
        } catch (KubernetesClientException e) {
            state.setLastApiError(BlockedByReport.tail(e.getMessage()));
            return null;
        }
    }

    /**
     * One list per namespace, or one cluster-wide list when there are more than
     * {@value #MAX_NAMESPACES_LISTED_ONE_BY_ONE} namespaces. Null when a list failed.
     */
    private Map<String, List<PodDisruptionBudget>> listed(Set<String> namespaces, DrainState state) {
        Map<String, List<PodDisruptionBudget>> byNamespace = new LinkedHashMap<>();
        namespaces.forEach(n -> byNamespace.put(n, new ArrayList<>()));
        try {
            if (namespaces.size() > MAX_NAMESPACES_LISTED_ONE_BY_ONE) {
                for (PodDisruptionBudget budget : client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems()) {
                    List<PodDisruptionBudget> ofNamespace = byNamespace.get(budget.getMetadata().getNamespace());
                    if (ofNamespace != null) {
                        ofNamespace.add(budget);
                    }
                }
            } else {
                for (String namespace : namespaces) {
                    byNamespace.put(namespace, client.policy().v1().podDisruptionBudget().inNamespace(namespace).list().getItems());
                }
            }
        } catch (KubernetesClientException e) {
            state.setLastApiError(BlockedByReport.tail("listing PodDisruptionBudgets: " + e.getMessage()));
            return null;
        }
        return byNamespace;
    }
}
