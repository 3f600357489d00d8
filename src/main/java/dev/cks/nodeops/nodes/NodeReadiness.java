package dev.cks.nodeops.nodes;

import java.util.List;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;

/** What a Node's status says about it, read the way the node lifecycle controller does. */
public final class NodeReadiness {
    public enum State { READY, NOT_READY, UNKNOWN, REMOVED }

    private NodeReadiness() {
    }

    public static boolean isReady(Node node) {
        return state(node) == State.READY;
    }

    /** READY when the Ready condition is True, NOT_READY when False, UNKNOWN when Unknown or not reported. */
    public static State state(Node node) {
        if (node == null) {
            return State.REMOVED;
        }
        List<NodeCondition> conditions = node.getStatus() == null ? null : node.getStatus().getConditions();
        if (conditions == null) {
            return State.UNKNOWN;
        }
        return conditions.stream().filter(c -> "Ready".equals(c.getType())).findFirst()
                .map(c -> "True".equals(c.getStatus()) ? State.READY : "False".equals(c.getStatus()) ? State.NOT_READY : State.UNKNOWN)
                .orElse(State.UNKNOWN);
    }

    /** status.nodeInfo.kubeletVersion, or null when the node has not reported one. */
    public static String kubeletVersion(Node node) {
        return node == null || node.getStatus() == null || node.getStatus().getNodeInfo() == null ? null
                : node.getStatus().getNodeInfo().getKubeletVersion();
    }

    public static boolean isUnschedulable(Node node) {
        return node != null && node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    }
}
