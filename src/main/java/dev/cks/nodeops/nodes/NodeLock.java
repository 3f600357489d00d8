package dev.cks.nodeops.nodes;

import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Only one operation may own a node at a time: the owner is named in an annotation on the Node, as
 * {@code <Kind>/<name>/<uid>}, so an operation re-created under the same name is not taken for the one
 * before. Taking the lock is a merge patch carrying the node's resourceVersion, so two operators racing
 * for the same node cannot both win (the second gets a 409 and sees the first's name). A lock whose
 * owner is gone (deleted without its finalizer running, or re-created) is reclaimed, and with it a
 * cordon that owner left, so no node stays locked or cordoned by nobody.
 * <p>
 * While locked, a node is also out of cluster-autoscaler's reach (CKS autoscaling): the lock sets its
 * scale-down-disabled annotation in the same patch, with a record that it was us, and the release removes both,
 * so the autoscaler cannot delete a node halfway through its drain or upgrade. A node that had the annotation
 * before keeps it as it was.
 */
public final class NodeLock {
    public sealed interface Outcome {
    }

    public record Acquired() implements Outcome {
    }

    public record HeldBy(String owner) implements Outcome {
    }

    public record NodeMissing() implements Outcome {
    }

    /** Taken over from an owner that no longer exists (with its cordon, if it left one). */
    public record Reclaimed(String from) implements Outcome {
    }

    private final KubernetesClient client;

    public NodeLock(KubernetesClient client) {
        this.client = client;
    }

    /** The operation as it appears in the lock and cordon annotations: `<Kind>/<name>/<uid>`. */
    public static String owner(String kind, String name, String uid) {
        return kind + "/" + name + "/" + uid;
    }

    public static Optional<String> holder(Node node) {
        return Optional.ofNullable(annotation(node, NodeAnnotations.LOCK));
    }

    /** The owner for people: `<Kind>/<name>`, without the uid. */
    public static String display(String owner) {
        int last = owner.lastIndexOf('/');
        return last > owner.indexOf('/') ? owner.substring(0, last) : owner;
    }

    /** Whether an annotation names this owner; an older operator wrote `<Kind>/<name>` without the uid. */
    public static boolean names(String annotation, String owner) {
        return annotation != null && (annotation.equals(owner) || owner.startsWith(annotation + "/") && annotation.indexOf('/') == annotation.lastIndexOf('/'));
    }

    /** Pure: what locking the node means for this owner, given which holders are gone. */
    public static Outcome decide(Node node, String owner, Predicate<String> gone) {
        if (node == null) {
            return new NodeMissing();
        }
        Optional<String> holder = holder(node);
        if (holder.isEmpty() || names(holder.get(), owner)) {
            return new Acquired();
        }
        return gone.test(holder.get()) ? new Reclaimed(holder.get()) : new HeldBy(holder.get());
    }

    /**
     * The merge patch that takes the lock for the owner; reclaiming, the cordon and the autoscaler protection the
     * gone owner left are taken over too, so this owner gives them back when it releases the node.
     */
    public static String lockPatch(Node node, String owner, Optional<String> reclaimedFrom) {
        boolean takesCordon = reclaimedFrom.isPresent() && reclaimedFrom.get().equals(Cordon.cordonedBy(node));
        String protectedBy = annotation(node, NodeAnnotations.SCALE_DOWN_DISABLED_BY);
        boolean protects = annotation(node, NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED) == null
                || reclaimedFrom.isPresent() && reclaimedFrom.get().equals(protectedBy);
        return "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion() + "\",\"annotations\":{\"" + NodeAnnotations.LOCK
                + "\":\"" + owner + "\"" + (takesCordon ? ",\"" + NodeAnnotations.CORDONED_BY + "\":\"" + owner + "\"" : "")
                + (protects ? ",\"" + NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED + "\":\"true\",\"" + NodeAnnotations.SCALE_DOWN_DISABLED_BY
                        + "\":\"" + owner + "\"" : "")
                + "}}}";
    }

    /** The merge patch that gives the lock back, and the autoscaler protection if this owner set it. */
    public static String releasePatch(Node node, String owner) {
        boolean protectedByUs = names(annotation(node, NodeAnnotations.SCALE_DOWN_DISABLED_BY), owner);
        return "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion() + "\",\"annotations\":{\"" + NodeAnnotations.LOCK
                + "\":null" + (protectedByUs ? ",\"" + NodeAnnotations.AUTOSCALER_SCALE_DOWN_DISABLED + "\":null,\"" + NodeAnnotations.SCALE_DOWN_DISABLED_BY
                        + "\":null" : "")
                + "}}}";
    }

    private static String annotation(Node node, String key) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(key);
    }

    /**
     * Takes the node's lock for the owner; idempotent.
     *
     * @param gone whether a holder's operation no longer exists (its lock may be reclaimed)
     */
    public Outcome acquire(String nodeName, String owner, Predicate<String> gone) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Node node = client.nodes().withName(nodeName).get();
            Outcome outcome = decide(node, owner, gone);
            if (outcome instanceof NodeMissing || outcome instanceof HeldBy || outcome instanceof Acquired && holder(node).isPresent()) {
                return outcome;
            }
            Optional<String> reclaimed = outcome instanceof Reclaimed r ? Optional.of(r.from()) : Optional.empty();
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), lockPatch(node, owner, reclaimed));
                return outcome;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                // Someone changed the node meanwhile (often only its status): read again and retry.
            }
        }
        Node node = client.nodes().withName(nodeName).get();
        Outcome outcome = decide(node, owner, holder -> false);
        if (outcome instanceof Acquired && node != null && holder(node).isEmpty()) {
            throw new IllegalStateException("could not lock node " + nodeName + ": it kept changing");
        }
        return outcome;
    }

    /** Releases the lock if this operation holds it; a lock held by another operation is left alone. */
    public void release(String nodeName, String owner) {
        for (int attempt = 0; attempt < 5; attempt++) {
            Node node = client.nodes().withName(nodeName).get();
            if (node == null || !holder(node).map(holder -> names(holder, owner)).orElse(false)) {
                return;
            }
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), releasePatch(node, owner));
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return;
                }
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
        throw new IllegalStateException("could not unlock node " + nodeName + ": it kept changing; will retry");
    }
}
