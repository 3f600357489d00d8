package dev.cks.nodeops.drain;

/** What one pod filter decides about a pod, with the reason users read. */
public record PodVerdict(Action action, String reason) {
    public enum Action {
        /** Remove the pod (evict, or delete when eviction is disabled). */
        EVICT,
        /** Leave the pod on the node; the drain does not wait for it. */
        SKIP,
        /** The drain cannot go on while this pod is on the node; the reason says which option overrides it. */
        REFUSE,
        /** Leave the pod on the node, but the drain is not done until it has completed or gone. */
        WAIT
    }

    private static final PodVerdict EVICT_IT = new PodVerdict(Action.EVICT, "");

    public static PodVerdict evict() {
        return EVICT_IT;
    }

    public static PodVerdict skip(String reason) {
        return new PodVerdict(Action.SKIP, reason);
    }

    public static PodVerdict refuse(String reason) {
        return new PodVerdict(Action.REFUSE, reason);
    }

    public static PodVerdict waitFor(String reason) {
        return new PodVerdict(Action.WAIT, reason);
    }
}
