package dev.cks.nodeops.common;

import java.util.Set;

import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The operator's one Kubernetes client — the one JOSDK reconciles, patches status and renews the Lease with — as
 * Quarkus builds it (its default producer steps aside for this one), with the {@link LeaderFence} in front of
 * every request that changes something: one place that no write path, ours or JOSDK's, can go around.
 */
@Singleton
public class FencedKubernetesClient {
    /** Reads and watches change nothing: they pass while the Lease is lost (the process halts at its next write). */
    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    @Produces
    @Singleton
    KubernetesClient kubernetesClient(KubernetesSerialization serialization, Config config, LeaderFence fence) {
        Interceptor fenced = new Interceptor() {
            @Override
            public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                if (isWrite(request.method())) {
                    fence.beforeWrite(request.method() + " " + request.uri().getPath());
                }
            }
        };
        return new KubernetesClientBuilder().withKubernetesSerialization(serialization).withConfig(config)
                .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("leader-fence", fenced)).build();
    }

    void close(@Disposes KubernetesClient client) {
        client.close();
    }

    static boolean isWrite(String method) {
        return !READS.contains(method);
    }
}
