package dev.cks.nodeops.drain;

import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * The Kubernetes client the drain engine ({@link NodeDrainer}, {@link DrainPreflight}) works with: the
 * operator's own configuration, but without Fabric8's retries of HTTP 429, so that a PodDisruptionBudget
 * refusing an eviction reaches the drain, which names the budget. Only the drain gets it: the operator's
 * informers need those retries (the API server answers 429 "storage is (re)initializing" right after a
 * CRD appears, and an informer that sees it stops for good). One per process, shared by the node
 * operations: each client built costs the start-up tens of milliseconds (its trust store takes in the
 * JVM's CAs), and holds connections of its own.
 */
@Singleton
public class DrainClient {
    private final KubernetesClient client;

    @Inject
    public DrainClient(KubernetesClient operatorClient) {
        this.client = from(operatorClient);
    }

    public KubernetesClient client() {
        return client;
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /** The drain's client for the operator's client (also what tests drain with). */
    public static KubernetesClient from(KubernetesClient operatorClient) {
        return new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(operatorClient.getConfiguration()).withRequestRetryBackoffLimit(0).build())
                .build();
    }
}
