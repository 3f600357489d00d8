package dev.cks.nodeops.operation;

import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.drain.DrainClient;
import dev.cks.nodeops.drain.OwnPod;
import io.fabric8.kubernetes.client.KubernetesClient;

/** What a node operation's reconciler needs of the cluster: its nodes, the one status writer, the status store. */
public record OperationPorts(NodeWork work, OperationRecorder recorder, StatusStore store) {
    /** On the API server, for one kind of operation (the kind names its metrics and its evictions' metrics). */
    public static OperationPorts onCluster(KubernetesClient client, DrainClient drainClient, String kind, EventRecorder events, OperationMetrics metrics,
            OperatorSettings settings) {
        return new OperationPorts(KubernetesNodeWork.readingFromApi(client, drainClient.client(), result -> metrics.evictionAnswered(kind, result),
                OwnPod.of(settings)),
                new OperationRecorder(kind, events, metrics), StatusStore.on(client));
    }
}
