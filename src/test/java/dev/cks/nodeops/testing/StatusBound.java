package dev.cks.nodeops.testing;

/**
 * The size the tests hold a NodeUpgrade to, as the API server serializes it (what etcd stores, against its 1.5 MiB
 * request limit): 360 bytes per node done with or waiting (name, phase, versions, its Job, the count of pods its
 * drain evicted; docs/upgrade.md, "What status keeps"); per node in progress 1.5 KiB and 64 bytes per pod on it (the
 * uids of pods still leaving while it drains, the workloads its soak waits for); 8 KiB for the rest (metadata, spec,
 * conditions); never more than a quarter of etcd's limit.
 */
public final class StatusBound {
    public static final int PER_NODE = 360;
    public static final int PER_NODE_IN_PROGRESS = 1536;
    public static final int PER_POD_IN_PROGRESS = 64;
    public static final int REST = 8 * 1024;
    /** A quarter of etcd's default request limit (1.5 MiB): the rest is headroom for annotations and what comes later. */
    public static final int QUARTER_OF_ETCD_LIMIT = 384 * 1024;

    private StatusBound() {
    }

    /** The bound for an operation over this many nodes, at most this many in progress at once, this many pods on each. */
    public static int of(int nodes, int inProgress, int podsPerNode) {
        return Math.min(QUARTER_OF_ETCD_LIMIT, REST + nodes * PER_NODE + inProgress * (PER_NODE_IN_PROGRESS + podsPerNode * PER_POD_IN_PROGRESS));
    }

    /** The bound once every node is done with. */
    public static int settled(int nodes) {
        return of(nodes, 0, 0);
    }
}
