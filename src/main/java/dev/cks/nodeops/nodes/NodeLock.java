package dev.cks.nodeops.nodes;

import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Only one operation may own a node at a time: the owner is named in an annotation on the Node.
 * Taking the lock is a merge patch carrying the node's resourceVersion, so two operators racing
 * for the same node cannot both win (the second gets a 409 and sees the first's name).
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

    private final KubernetesClient client;

    public NodeLock(KubernetesClient client) {
        this.client = client;
    }

    /** The operation's name as it appears in the lock: `<Kind>/<name>`. */
    public static String owner(String kind, String name) {
        return kind + "/" + name;
    }

    public static Optional<String> holder(Node node) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        return Optional.ofNullable(annotations == null ? null : annotations.get(NodeAnnotations.LOCK));
    }

    public Outcome acquire(String nodeName, String owner) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Node node = client.nodes().withName(nodeName).get();
            if (node == null) {
                return new NodeMissing();
            }
            Optional<String> holder = holder(node);
            if (holder.isPresent()) {
                return holder.get().equals(owner) ? new Acquired() : new HeldBy(holder.get());
            }
            String patch = "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion()
                    + "\",\"annotations\":{\"" + NodeAnnotations.LOCK + "\":\"" + owner + "\"}}}";
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
                return new Acquired();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                // Someone changed the node meanwhile (often only its status): read again and retry.
            }
        }
        Node node = client.nodes().withName(nodeName).get();
        return node == null ? new NodeMissing() : holder(node).<Outcome>map(h -> h.equals(owner) ? new Acquired() : new HeldBy(h))
                .orElseThrow(() -> new IllegalStateException("could not lock node " + nodeName + ": it kept changing"));
    }

    /** Releases the lock if this operation holds it; a lock held by another operation is left alone. */
    public void release(String nodeName, String owner) {
        for (int attempt = 0; attempt < 5; attempt++) {
            Node node = client.nodes().withName(nodeName).get();
            if (node == null || !holder(node).map(owner::equals).orElse(false)) {
                return;
            }
            String patch = "{\"metadata\":{\"resourceVersion\":\"" + node.getMetadata().getResourceVersion()
                    + "\",\"annotations\":{\"" + NodeAnnotations.LOCK + "\":null}}}";
            try {
                client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
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
