package dev.cks.nodeops.scaledown;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.operation.NodeOperationStatus;
import dev.cks.nodeops.operation.Stage;

public class ScaleDownStatus extends NodeOperationStatus {
    public enum Phase { Pending, Waiting, Cordoning, Draining, Removing, Succeeded, RolledBack, Failed }

    private Phase phase;
    /** The nodes picked for removal, comma-separated, for `kubectl get`. */
    private String targetNodes;
    private List<ScaleDownNodeStatus> nodes = new ArrayList<>();
    /** Nodes the escalation ladder's SkipNode gave up: given back, not removed; no longer in nodes or targetNodes. */
    private List<ScaleDownNodeStatus> keptNodes = new ArrayList<>();
    private RemovalStatus removal;
    private RollbackStatus rollback;

    /** Written before a rollback gives back any node, so a restart half-way finishes the rollback instead of draining on. */
    public static class RollbackStatus {
        /** The reason of the RolledBack condition. */
        private String reason;
        /** Why the ScaleDown rolls back. */
        private String cause;

        public String getReason() { return reason; }
        public void setReason(String reason) { this.reason = reason; }
        public String getCause() { return cause; }
        public void setCause(String cause) { this.cause = cause; }
    }

    /**
     * The CloudStack API a removal uses, named as CloudStack names it. Chosen once, when removal begins, and
     * kept in status: after removeNodesFromKubernetesCluster the VM map no longer says the nodes were external,
     * so an operator restarted then could not tell again.
     */
    public enum RemovalCommand {
        /** CloudStackScale: one scaleKubernetesCluster with the VMs as nodeids; CloudStack destroys the VMs. */
        scaleKubernetesCluster,
        /** CloudStackScale of external nodes (CloudStack 4.21+): CloudStack resets the nodes and drops them from its map; the VMs stay. */
        removeNodesFromKubernetesCluster,
        /** DestroyVM: each VM dropped from the map with removeVirtualMachinesFromKubernetesCluster, then destroyed. */
        destroyVirtualMachine
    }

    public static class RemovalStatus {
        /** The CloudStack API that removes the nodes; absent in a status written before it existed, which means scaleKubernetesCluster. */
        private RemovalCommand command;
        /** The CloudStack async job of CloudStackScale, recorded as soon as CloudStack answers (or found after a lost answer). */
        private String jobId;
        /** When the removal began. */
        private String startedAt;
        /**
         * CloudStackScale: when scaleKubernetesCluster (or removeNodesFromKubernetesCluster) was sent, written before it is sent. Set without a jobId,
         * the request's outcome is unknown: CloudStack's state and jobs are read, it is not sent again.
         */
        private String requestedAt;
        private List<String> removedVmIds = new ArrayList<>();
        private List<String> remainingVmIds = new ArrayList<>();

        public RemovalCommand getCommand() { return command; }
        public void setCommand(RemovalCommand command) { this.command = command; }
        public String getJobId() { return jobId; }
        public void setJobId(String jobId) { this.jobId = jobId; }
        public String getStartedAt() { return startedAt; }
        public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
        public String getRequestedAt() { return requestedAt; }
        public void setRequestedAt(String requestedAt) { this.requestedAt = requestedAt; }
        public List<String> getRemovedVmIds() { return removedVmIds; }
        public void setRemovedVmIds(List<String> removedVmIds) { this.removedVmIds = removedVmIds == null ? new ArrayList<>() : removedVmIds; }
        public List<String> getRemainingVmIds() { return remainingVmIds; }
        public void setRemainingVmIds(List<String> remainingVmIds) { this.remainingVmIds = remainingVmIds == null ? new ArrayList<>() : remainingVmIds; }
    }

    public Phase getPhase() { return phase; }
    public void setPhase(Phase phase) { this.phase = phase; }
    public String getTargetNodes() { return targetNodes; }
    public void setTargetNodes(String targetNodes) { this.targetNodes = targetNodes; }
    public List<ScaleDownNodeStatus> getNodes() { return nodes; }
    public void setNodes(List<ScaleDownNodeStatus> nodes) { this.nodes = nodes == null ? new ArrayList<>() : nodes; }
    public List<ScaleDownNodeStatus> getKeptNodes() { return keptNodes; }

    @Override
    protected List<ScaleDownNodeStatus> nodeProgress() {
        List<ScaleDownNodeStatus> all = new ArrayList<>(nodes);
        all.addAll(keptNodes);
        return all;
    }
    public void setKeptNodes(List<ScaleDownNodeStatus> keptNodes) { this.keptNodes = keptNodes == null ? new ArrayList<>() : keptNodes; }
    public RemovalStatus getRemoval() { return removal; }
    public void setRemoval(RemovalStatus removal) { this.removal = removal; }
    public RollbackStatus getRollback() { return rollback; }
    public void setRollback(RollbackStatus rollback) { this.rollback = rollback; }

    /** Waiting only before any node is held (planning); once nodes are cordoned the phase stays and the Waiting condition says why. */
    @Override
    public void enter(Stage stage) {
        phase = switch (stage) {
            case WAITING -> phase == null || phase == Phase.Pending || phase == Phase.Waiting ? Phase.Waiting : phase;
            case RUNNING -> phase == Phase.Waiting ? Phase.Pending : phase;
            case HOLDING -> phase; // a ScaleDown never holds
            case SUCCEEDED -> Phase.Succeeded;
            case ROLLED_BACK -> Phase.RolledBack;
            case FAILED -> Phase.Failed;
        };
    }

    @Override
    public String phaseName() {
        return phase == null ? null : phase.name();
    }

    @Override
    public boolean finished() {
        return phase == Phase.Succeeded || phase == Phase.RolledBack || phase == Phase.Failed;
    }
}
