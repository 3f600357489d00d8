package dev.cks.nodeops.common;

/** Annotations and labels the operator writes on Nodes; all under the API group's prefix. */
public final class NodeAnnotations {
    public static final String PREFIX = "nodeops.cks.dev/";
    /** Which operation owns the node: `<kind>/<name>`; only one at a time. */
    public static final String LOCK = PREFIX + "locked-by";
    /** Set when we cordoned the node: `<kind>/<name>`; absent when it was unschedulable before us. */
    public static final String CORDONED_BY = PREFIX + "cordoned-by";
    /** On a NodeUpgrade: change its value to retry a failed upgrade. */
    public static final String RETRY = PREFIX + "retry";

    private NodeAnnotations() {
    }
}
