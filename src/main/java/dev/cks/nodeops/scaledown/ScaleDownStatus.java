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

    public static class RemovalStatus {
        /** The CloudStack async job of CloudStackScale, recorded as soon as CloudStack answers. */
        private String jobId;
        /**
         * Written (and patched) before the first CloudStack write: a restarted operator that finds it set
         * but no jobId asks CloudStack what happened instead of calling again.
         */
        private String startedAt;
        private List<String> removedVmIds = new ArrayList<>();
        private List<String> remainingVmIds = new ArrayList<>();

        public String getJobId() { return jobId; }
        public void setJobId(String jobId) { this.jobId = jobId; }
        public String getStartedAt() { return startedAt; }
        public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
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
    public void setKeptNodes(List<ScaleDownNodeStatus> keptNodes) { this.keptNodes = keptNodes == null ? new ArrayList<>() : keptNodes; }
    public RemovalStatus getRemoval() { return removal; }
    public void setRemoval(RemovalStatus removal) { this.removal = removal; }

    /** Waiting only before any node is held (planning); once nodes are cordoned the phase stays and the Waiting condition says why. */
    @Override
    public void enter(Stage stage) {
        phase = switch (stage) {
            case WAITING -> phase == null || phase == Phase.Pending || phase == Phase.Waiting ? Phase.Waiting : phase;
            case RUNNING -> phase == Phase.Waiting ? Phase.Pending : phase;
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
