package dev.cks.nodeops.scaledown;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;

import dev.cks.nodeops.operation.NodeOperationStatus;
import dev.cks.nodeops.operation.Stage;

public class ScaleDownStatus extends NodeOperationStatus {
    public enum Phase { Pending, Waiting, Cordoning, Draining, Removing, Succeeded, RolledBack, Failed }

    @JsonPropertyDescription("Pending (planning), Waiting (held by spec.paused, the window or another wait before any node is cordoned),"
            + " Cordoning, Draining, Removing (CloudStack removes the VMs), Succeeded, RolledBack (every node given back) or Failed.")
    private Phase phase;
    @JsonPropertyDescription("The names of the nodes picked for removal, recorded before any of them is locked; nodes kept by SkipNode"
            + " leave it. (An operator before 0.3.0 wrote them as one comma-separated string; such a status is still read.)")
    @JsonDeserialize(using = TargetNodesDeserializer.class)
    // Left out while empty: `kubectl get` shows no NODES before the pick rather than [], and the apply removes it.
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    private List<String> targetNodes = new ArrayList<>();
    @JsonPropertyDescription("Every node picked for removal, with its phase and drain; nodes kept by SkipNode move to keptNodes.")
    private List<ScaleDownNodeStatus> nodes = new ArrayList<>();
    @JsonPropertyDescription("Nodes the escalation ladder's SkipNode gave up: given back (uncordoned), not removed; no longer in nodes or targetNodes.")
    private List<ScaleDownNodeStatus> keptNodes = new ArrayList<>();
    @JsonPropertyDescription("How the nodes are removed through CloudStack; absent until every node is drained and removal begins.")
    private RemovalStatus removal;
    @JsonPropertyDescription("Why the ScaleDown rolls back, written before any node is given back; absent unless it rolls back.")
    private RollbackStatus rollback;

    /** Written before a rollback gives back any node, so a restart half-way finishes the rollback instead of draining on. */
    public static class RollbackStatus {
        @JsonPropertyDescription("The reason of the RolledBack condition, e.g. DrainBlocked.")
        private String reason;
        @JsonPropertyDescription("Why the ScaleDown rolls back, as a sentence.")
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
        @JsonPropertyDescription("The CloudStack API that removes the nodes: scaleKubernetesCluster, removeNodesFromKubernetesCluster (external"
                + " nodes, CloudStack 4.21+; the VMs stay) or destroyVirtualMachine (spec.removal DestroyVM). Absent means scaleKubernetesCluster.")
        private RemovalCommand command;
        @JsonPropertyDescription("CloudStackScale: the CloudStack async job removing the nodes, recorded as soon as CloudStack answers (or found after a lost answer).")
        private String jobId;
        @JsonPropertyDescription("When the removal began (RFC 3339, UTC).")
        private String startedAt;
        @JsonPropertyDescription("CloudStackScale: when the request was sent, written before it is sent. Set without jobId, the request's outcome"
                + " is unknown: CloudStack's state and jobs are read, and it is not sent again.")
        private String requestedAt;
        @JsonPropertyDescription("The CloudStack VM ids removed so far.")
        private List<String> removedVmIds = new ArrayList<>();
        @JsonPropertyDescription("The CloudStack VM ids still to remove.")
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
    public List<String> getTargetNodes() { return targetNodes; }

    /**
     * Read from a status an operator before 0.3.0 wrote (status.targetNodes as text): the API server cannot apply a
     * status over it under the current CRD ("failed to create typed live object"), so it is replaced first. Not a bean
     * property, so it stays out of the CRD and the JSON.
     */
    public boolean writtenByAnOlderOperator() {
        return targetNodes instanceof TargetNodesDeserializer.ReadFromText;
    }
    public void setTargetNodes(List<String> targetNodes) { this.targetNodes = targetNodes == null ? new ArrayList<>() : targetNodes; }
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
