package dev.cks.nodeops.drainability;

import java.util.concurrent.atomic.AtomicInteger;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.drain.LeanCopies;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * One paged list each of every Node, pod and PodDisruptionBudget per pass, whatever the number of nodes. Not the
 * operator's Node cache: that keeps only what the operations read of a Node (no taints, allocatable or addresses),
 * and the scheduling-aware prediction needs them all; nor a pod cache, which would hold every pod of the
 * cluster between passes for a question asked every few minutes.
 */
final class ApiClusterReader implements ClusterReader {
    private final KubernetesClient client;

    ApiClusterReader(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Read read() {
        AtomicInteger requests = new AtomicInteger();
        Runnable count = requests::incrementAndGet;
        Drainability.Reading reading = new Drainability.Reading(ListPages.all(client.nodes(), count, LeanCopies::node),
                ListPages.all(client.pods().inAnyNamespace(), count, new LeanCopies()::pod),
                ListPages.all(client.policy().v1().podDisruptionBudget().inAnyNamespace(), count));
        return new Read(reading, requests.get());
    }
}
