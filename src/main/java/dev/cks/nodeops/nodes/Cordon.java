package dev.cks.nodeops.nodes;

import java.util.Map;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Cordons and uncordons nodes and remembers, on the node, which operation cordoned it: a node that
 * was unschedulable before an operation is never uncordoned by it, even after an operator restart.
 */
public final class Cordon {
    public enum Decision {
        /** Schedulable and not ours: cordon it and record that we did. */
        CORDON,
        /** Our annotation is there: we cordoned it earlier (e.g. before a restart). */
        OURS,
        /** Unschedulable already (by a person or another operation), or unreadable: leave it be and never uncordon it. */
        CORDONED_BEFORE
    }

    private static final int CONFLICT_RETRIES = 3;

    private final KubernetesClient client;

    public Cordon(KubernetesClient client) {
        this.client = client;
    }

    /** Pure: what cordoning means for this node as read (null when it could not be read). */
    public static Decision decide(Node node, String operation) {
        if (node == null) {
            return Decision.CORDONED_BEFORE;
        }
        if (NodeLock.names(cordonedBy(node), operation)) {
            return Decision.OURS;
        }
        return NodeReadiness.isUnschedulable(node) ? Decision.CORDONED_BEFORE : Decision.CORDON;
    }

    /** Pure: whether this operation may uncordon the node: only when the node says we cordoned it. */
    public static boolean mayUncordon(Node node, String operation) {
        return node != null && NodeLock.names(cordonedBy(node), operation);
    }

    /**
     * Makes the node unschedulable on behalf of the operation; idempotent.
     *
     * @param operation `<kind>/<name>` of the operation, e.g. `NodeUpgrade/to-1-35`
     */
    public CordonRecord cordon(String nodeName, String operation) {
        for (int attempt = 0; ; attempt++) {
            Node node;
            try {
                node = client.nodes().withName(nodeName).get();
            } catch (KubernetesClientException e) {
                return new CordonRecord(nodeName, false, false, "Node " + nodeName + " could not be read (" + e.getMessage()
                        + "); it counts as cordoned before this operation and will not be uncordoned by it.");
            }
            if (node == null) {
                return new CordonRecord(nodeName, false, false, "Node " + nodeName + " does not exist.");
            }
            Decision decision = decide(node, operation);
            if (decision == Decision.CORDONED_BEFORE) {
                String by = cordonedBy(node);
                return new CordonRecord(nodeName, false, true, "Node " + nodeName + " was already unschedulable"
                        + (by == null ? "" : " (cordoned by " + by + ")") + "; this operation will leave it cordoned.");
            }
            if (decision == Decision.OURS && NodeReadiness.isUnschedulable(node)) {
                return new CordonRecord(nodeName, true, true, "");
            }
            // One patch sets both, so no restart can leave a node cordoned without the record of who did it.
            String patch = "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion() + "\",\"annotations\":{\""
                    + NodeAnnotations.CORDONED_BY + "\":\"" + operation + "\"}},\"spec\":{\"unschedulable\":true}}";
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
                return new CordonRecord(nodeName, true, true, "");
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= CONFLICT_RETRIES) {
                    throw e;
                }
            }
        }
    }

    /**
     * Makes the node schedulable again if, and only if, this operation cordoned it; idempotent.
     *
     * @return true when the node was uncordoned by this call
     */
    public boolean uncordon(String nodeName, String operation) {
        for (int attempt = 0; ; attempt++) {
            Node node = client.nodes().withName(nodeName).get();
            if (!mayUncordon(node, operation)) {
                return false;
            }
            String patch = "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion() + "\",\"annotations\":{\""
                    + NodeAnnotations.CORDONED_BY + "\":null}},\"spec\":{\"unschedulable\":null}}";
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
                return true;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= CONFLICT_RETRIES) {
                    throw e;
                }
            }
        }
    }

    static String cordonedBy(Node node) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(NodeAnnotations.CORDONED_BY);
    }
}
