package dev.cks.nodeops.drain;

import java.util.List;

import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * The pod this operator runs in, if it runs in one: the chart names the leader identity after the pod
 * ({@code metadata.name}) in the operator's namespace. A drain evicts that pod only once nothing else is left to
 * leave its node. Until then the leader keeps leading the drain of its own node instead of handing it over
 * half-way; and where the standby runs on the same node (CKS's default 1 control-plane + 1 worker, once one node
 * was drained), the standby's pod goes first, so that its replacement, elsewhere, is the replica that takes over
 * — one handover, not two. The chart's PodDisruptionBudget still decides when each may go. Pure.
 *
 * @param namespace null when the operator runs in no pod
 * @param name null when the operator runs in no pod
 */
public record OwnPod(String namespace, String name) {
    /** An operator outside the cluster (or an identity that names no pod): no pod is held back. */
    public static final OwnPod NONE = new OwnPod(null, null);

    public static OwnPod of(OperatorSettings settings) {
        return settings.leaderElection().identity().map(identity -> new OwnPod(settings.namespace(), identity)).orElse(NONE);
    }

    public boolean is(Pod pod) {
        return name != null && name.equals(pod.getMetadata().getName()) && namespace.equals(pod.getMetadata().getNamespace());
    }

    /**
     * The own pod among the pods still to evict, held back while any other pod has to leave the node (to evict,
     * leaving, or awaited to complete); empty when it is not among them or is all that is left.
     *
     * @param othersToLeave how many pods besides {@code staying} still have to leave the node
     */
    public List<Pod> heldBack(List<Pod> staying, int othersToLeave) {
        List<Pod> own = staying.stream().filter(this::is).toList();
        return staying.size() - own.size() + othersToLeave > 0 ? own : List.of();
    }
}
