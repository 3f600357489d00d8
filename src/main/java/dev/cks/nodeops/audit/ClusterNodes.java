package dev.cks.nodeops.audit;

import java.util.List;

/**
 * The cluster's Nodes, or why they could not be read. When unavailable the audit compares only the
 * map with the VMs and keeps the node findings it had.
 */
public record ClusterNodes(boolean available, List<NodeView> nodes, String unavailableReason) {
    public ClusterNodes {
        nodes = nodes == null ? List.of() : List.copyOf(nodes);
    }

    public static ClusterNodes of(List<NodeView> nodes) {
        return new ClusterNodes(true, nodes, null);
    }

    public static ClusterNodes unavailable(String reason) {
        return new ClusterNodes(false, List.of(), reason);
    }
}
