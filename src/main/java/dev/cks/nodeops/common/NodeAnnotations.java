package dev.cks.nodeops.common;

/** Annotations and labels the operator writes on Nodes; all under the API group's prefix. */
public final class NodeAnnotations {
    public static final String PREFIX = "nodeops.cks.dev/";
    /** Which operation owns the node: `<kind>/<name>`; only one at a time. */
    public static final String LOCK = PREFIX + "locked-by";
    /** Set when we cordoned the node: `<kind>/<name>`; absent when it was unschedulable before us. */
    public static final String CORDONED_BY = PREFIX + "cordoned-by";
    /**
     * On a Node: leave this node out of every node operation ("true", or a reason). A NodeUpgrade skips it
     * and says so; a ScaleDown never picks it and refuses to remove it by name. "false" is the same as absent.
     */
    public static final String EXCLUDE = PREFIX + "exclude";
    /**
     * cluster-autoscaler leaves a node with this annotation "true" out of its scale-down (CKS autoscaling runs
     * it). Set while an operation holds the node's lock, unless the node had it already.
     */
    public static final String AUTOSCALER_SCALE_DOWN_DISABLED = "cluster-autoscaler.kubernetes.io/scale-down-disabled";
    /** Set with {@link #AUTOSCALER_SCALE_DOWN_DISABLED} when we set that: the lock's owner, which removes both on release. */
    public static final String SCALE_DOWN_DISABLED_BY = PREFIX + "scale-down-disabled-by";
    /** On a NodeUpgrade: change its value to retry a failed upgrade. */
    public static final String RETRY = PREFIX + "retry";

    private NodeAnnotations() {
    }

    /** Why the node is left out of node operations (its exclude annotation), or empty when it is not. */
    public static java.util.Optional<String> excluded(io.fabric8.kubernetes.api.model.Node node) {
        java.util.Map<String, String> annotations = node == null ? null : node.getMetadata().getAnnotations();
        String value = annotations == null ? null : annotations.get(EXCLUDE);
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase("false")) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("it opts out of node operations (" + EXCLUDE + ": " + value.strip() + ")");
    }
}
