package dev.cks.nodeops.scaledown;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;

/** What a ScaleDown does next, decided from its status alone (pure), so a restarted operator decides the same. */
final class ScaleDownSteps {
    /** What CloudStack shows of a scale whose request was recorded but whose job id was not (the operator stopped in between). */
    enum RemovalSeen {
        /** None of the VMs is in the cluster's map any more. */
        DONE,
        /** CloudStack is still changing the cluster: wait and look again. */
        IN_PROGRESS,
        /** The VMs are all there and the cluster is idle: the request never took effect. */
        NOT_STARTED
    }

    /** The VMs a failed removal took and left. */
    record RemovalSplit(List<String> removed, List<String> remaining) {
    }

    private ScaleDownSteps() {
    }

    /** Nodes are drained in the order of status.nodes; a node being drained is finished before the next starts. */
    static Optional<ScaleDownNodeStatus> nextToDrain(List<ScaleDownNodeStatus> nodes) {
        return nodes.stream().filter(n -> n.getPhase() == Phase.Draining).findFirst()
                .or(() -> nodes.stream().filter(n -> n.getPhase() == Phase.Cordoned).findFirst());
    }

    /** "drained/total" over the nodes that need a drain (down nodes need none). */
    static String progress(List<ScaleDownNodeStatus> nodes) {
        long total = nodes.stream().filter(n -> n.getPhase() != Phase.SkippedDown && n.getDownReason() == null).count();
        long drained = nodes.stream().filter(n -> n.getDownReason() == null)
                .filter(n -> n.getPhase() == Phase.Drained || n.getPhase() == Phase.Removed).count();
        return drained + "/" + total;
    }

    /** For the final message: the nodes the escalation ladder kept, or nothing. */
    static String keptNote(ScaleDownStatus status) {
        return status.getKeptNodes().isEmpty() ? "" : " Kept (their drain was given up): "
                + String.join(", ", status.getKeptNodes().stream().map(ScaleDownNodeStatus::getName).toList()) + ".";
    }

    static List<String> vmIds(List<ScaleDownNodeStatus> nodes) {
        return nodes.stream().map(ScaleDownNodeStatus::getVmId).filter(Objects::nonNull).toList();
    }

    static RemovalSeen removalSeen(KubernetesCluster cluster, List<String> vmIds) {
        if (cluster == null || vmIds.stream().noneMatch(cluster.vmIds()::contains)) {
            return RemovalSeen.DONE;
        }
        return CloudStackAccess.isBusy(cluster) ? RemovalSeen.IN_PROGRESS : RemovalSeen.NOT_STARTED;
    }

    static RemovalSplit split(List<String> vmIds, Set<String> stillMapped) {
        return new RemovalSplit(vmIds.stream().filter(id -> !stillMapped.contains(id)).toList(),
                vmIds.stream().filter(stillMapped::contains).toList());
    }
}
