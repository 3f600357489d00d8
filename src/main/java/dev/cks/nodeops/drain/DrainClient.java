package dev.cks.nodeops.drain;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * The Kubernetes client the drain engine ({@link NodeDrainer}, {@link DrainPreflight}) works with: the
 * operator's own configuration, but without Fabric8's retries of HTTP 429, so that a PodDisruptionBudget
 * refusing an eviction reaches the drain, which names the budget. Only the drain gets it: the operator's
 * informers need those retries (the API server answers 429 "storage is (re)initializing" right after a
 * CRD appears, and an informer that sees it stops for good).
 */
public final class DrainClient {
    private DrainClient() {
    }

    public static KubernetesClient from(KubernetesClient operatorClient) {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(operatorClient.getConfiguration()).withRequestRetryBackoffLimit(0).build())
                .build();
    }
}
