package dev.cks.nodeops.drainability;

/** Where a pass reads the cluster from: the API server in the operator, fixed readings in tests. */
public interface ClusterReader {
    /** @param apiRequests what the reading cost the API server, in requests */
    record Read(Drainability.Reading reading, int apiRequests) {
    }

    /** @throws io.fabric8.kubernetes.client.KubernetesClientException when a list is refused or fails */
    Read read();
}
