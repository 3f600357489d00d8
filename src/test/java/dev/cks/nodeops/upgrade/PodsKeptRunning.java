package dev.cks.nodeops.upgrade;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * Keeps the upgrade Jobs' pods on one node Running, as a kubeadm still at work: each pod, as it is created,
 * gets the annotations KWOK's pod-complete stage reads its delay from (an hour), before KWOK has even started
 * it (its pod-create stage waits a second or more). Its Job stays active with its pod started.
 */
final class PodsKeptRunning implements AutoCloseable {
    private static final String KEEP_RUNNING = "{\"metadata\":{\"annotations\":{\"pod-complete.stage.kwok.x-k8s.io/delay\":\"1h\","
            + "\"pod-complete.stage.kwok.x-k8s.io/jitter-delay\":\"1h\"}}}";
    private final SharedIndexInformer<Pod> informer;

    PodsKeptRunning(KubernetesClient client, String node, String namespace) {
        this.informer = client.pods().inNamespace(namespace).withLabel("job-name").inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                if (!node.equals(pod.getSpec().getNodeName())) {
                    return;
                }
                try {
                    client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE), KEEP_RUNNING);
                } catch (KubernetesClientException gone) {
                    // Deleted meanwhile: nothing to keep running.
                }
            }

            @Override
            public void onUpdate(Pod before, Pod pod) {
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
            }
        });
    }

    @Override
    public void close() {
        informer.close();
    }
}
