package dev.cks.nodeops.drainability;

import java.util.concurrent.atomic.AtomicInteger;

import dev.cks.nodeops.common.ListPages;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * One paged list each of every Node, pod and PodDisruptionBudget per pass, whatever the number of nodes. Not the
 * operator's Node cache: that keeps only what the operations read of a Node (no taints, allocatable or addresses),
 * and the scheduling-aware prediction needs them all; nor a pod cache, which would hold every pod of the
 * cluster between passes for a question asked every few minutes.
 */
final class ApiClusterReader implements ClusterReader {
    private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
    private final KubernetesClient client;

    ApiClusterReader(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public Read read() {
        AtomicInteger requests = new AtomicInteger();
        Runnable count = requests::incrementAndGet;
        Drainability.Reading reading = new Drainability.Reading(ListPages.all(client.nodes(), count, ApiClusterReader::withoutManagedFields),
                ListPages.all(client.pods().inAnyNamespace(), count, ApiClusterReader::pruned),
                ListPages.all(client.policy().v1().podDisruptionBudget().inAnyNamespace(), count));
        return new Read(reading, requests.get());
    }

    /**
     * What a verdict reads of a pod, kept page by page: a pass holds every pod of the cluster at once, and under the
     * chart's default heap a thousand nodes' full pods did not fit (docs/benchmarks.md, "DrainReport at 1,000 nodes").
     * Kept: metadata but the managed fields and kubectl's last-applied copy; the spec's scheduling (node, selector,
     * affinity, tolerations, spread, overhead, volumes' kinds) and each container's requests and ports; the phase.
     */
    static Pod pruned(Pod pod) {
        withoutManagedFields(pod);
        if (pod.getMetadata().getAnnotations() != null) {
            pod.getMetadata().getAnnotations().remove(LAST_APPLIED);
        }
        PodSpec spec = pod.getSpec();
        if (spec != null) {
            spec.setContainers(spec.getContainers() == null ? null : spec.getContainers().stream().map(ApiClusterReader::pruned).toList());
            spec.setInitContainers(spec.getInitContainers() == null ? null : spec.getInitContainers().stream().map(ApiClusterReader::pruned).toList());
            spec.setEphemeralContainers(null);
            spec.setVolumes(spec.getVolumes() == null ? null : spec.getVolumes().stream()
                    .map(v -> new VolumeBuilder().withName(v.getName()).withEmptyDir(v.getEmptyDir()).build()).toList());
        }
        if (pod.getStatus() != null) {
            pod.setStatus(new PodStatusBuilder().withPhase(pod.getStatus().getPhase()).build());
        }
        return pod;
    }

    private static Container pruned(Container container) {
        return new ContainerBuilder().withName(container.getName()).withResources(container.getResources()).withPorts(container.getPorts())
                .withRestartPolicy(container.getRestartPolicy()).build();
    }

    /** The server-side-apply bookkeeping is often most of a listed object, and no verdict reads it: dropped page by page. */
    private static <T extends HasMetadata> T withoutManagedFields(T item) {
        item.getMetadata().setManagedFields(null);
        return item;
    }
}
