package dev.cks.nodeops.nodes;

/**
 * Who cordoned a node, as the operation stores it in its status (`cordonedByUs`) next to the
 * `nodeops.cks.dev/cordoned-by` annotation on the node itself.
 *
 * @param cordonedByUs true only when this operation made the node unschedulable; false when it was
 *     unschedulable before, or its state could not be read (then we must never uncordon it)
 * @param unschedulable whether the node is now known to be unschedulable
 * @param note why cordonedByUs is false, for events; empty otherwise
 */
public record CordonRecord(String node, boolean cordonedByUs, boolean unschedulable, String note) {
}
