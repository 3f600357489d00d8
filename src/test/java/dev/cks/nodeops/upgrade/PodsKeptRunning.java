package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.util.List;

import org.awaitility.Awaitility;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Keeps the pods on one node Running once they run, as a kubeadm still at work: a ValidatingAdmissionPolicy
 * refuses any status that says a pod there has ended (KWOK would otherwise complete a Job's pod the moment
 * it runs). An upgrade Job on that node stays active with its pod started. See {@link PodsHeldOffNode}.
 */
final class PodsKeptRunning implements AutoCloseable {
    private final KubernetesClient client;
    private final String node;
    private final String policy;

    PodsKeptRunning(KubernetesClient client, String node, String probeNamespace) {
        this.client = client;
        this.node = node;
        this.policy = "nu-it-keep-" + node;
        PodsHeldOffNode.deny(client, policy, "UPDATE", "pods/status", "object.spec.nodeName != '" + node
                + "' || !has(object.status.phase) || !(object.status.phase in ['Succeeded', 'Failed'])", "the test keeps pods on node " + node + " running");
        // In force once the API server has compiled it: probe with a pod whose end is written by hand.
        var probe = client.pods().inNamespace(probeNamespace).resource(new PodBuilder().withNewMetadata().withName(policy + "-probe").endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.invalid/probe:1").endContainer().endSpec().build());
        probe.create();
        try {
            Awaitility.await("admission policy " + policy + " in force").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        try {
                            client.pods().inNamespace(probeNamespace).withName(policy + "-probe").subresource("status")
                                    .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":{\"phase\":\"Failed\"}}");
                            return false;
                        } catch (KubernetesClientException e) {
                            return e.getMessage() != null && e.getMessage().contains("keeps pods on node");
                        }
                    });
        } finally {
            probe.withGracePeriod(0).delete();
        }
    }

    /**
     * Lifts the hold and waits until KWOK has ended the pods of {@code namespace} on the node, as their containers exit.
     * KWOK drops a status the API server refused (it retries only an unreachable or overloaded server:
     * https://github.com/kubernetes-sigs/kwok/blob/v0.8.0/pkg/kwok/controllers/utils.go#L141), so a pod still running is
     * touched (an annotation) until it ended: each change has KWOK play its stages again, the hold gone once the API
     * server has dropped the policy.
     */
    void letEnd(String namespace) {
        close();
        Awaitility.await("KWOK ending the pods on node " + node).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500)).until(() -> {
            var running = client.pods().inNamespace(namespace).withField("spec.nodeName", node).list().getItems().stream()
                    .filter(p -> p.getStatus() == null || !List.of("Succeeded", "Failed").contains(p.getStatus().getPhase())).toList();
            for (var pod : running) {
                try {
                    client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE),
                            "{\"metadata\":{\"annotations\":{\"nodeupgrade-it.nodeops.cks.dev/let-end\":\"" + System.nanoTime() + "\"}}}");
                } catch (KubernetesClientException gone) {
                    // Deleted meanwhile: it is not running any more either.
                }
            }
            return running.isEmpty();
        });
    }

    @Override
    public void close() {
        PodsHeldOffNode.remove(client, policy);
    }
}
