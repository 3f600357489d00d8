package dev.cks.nodeops.upgrade;

import java.time.Duration;

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
    private final String policy;

    PodsKeptRunning(KubernetesClient client, String node, String probeNamespace) {
        this.client = client;
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

    @Override
    public void close() {
        PodsHeldOffNode.remove(client, policy);
    }
}
