package dev.cks.nodeops.testing;

/**
 * The size the tests hold an operation's object to, as the API server serializes it (what etcd stores, against its
 * 1.5 MiB request limit): about 360 bytes per node done with or waiting (names, phase, versions, the Job, the count
 * of pods its drain evicted; docs/upgrade.md, "What status keeps"), up to 8 KiB per node in progress (a drain's pods
 * still leaving, the workloads its soak waits for), 8 KiB for the rest (metadata, spec, conditions); never more than
 * a quarter of the limit.
 */
public final class StatusBound {
    public static final int PER_NODE = 360;
    public static final int PER_NODE_IN_PROGRESS = 8 * 1024;
    public static final int REST = 8 * 1024;
    /** A quarter of etcd's default request limit (1.5 MiB): the rest is headroom for annotations and what comes later. */
    public static final int QUARTER_OF_ETCD_LIMIT = 384 * 1024;

    private StatusBound() {
    }

    /** The bound for an operation over this many nodes with at most this many in progress at once. */
    public static int of(int nodes, int inProgress) {
        return Math.min(QUARTER_OF_ETCD_LIMIT, REST + nodes * PER_NODE + inProgress * PER_NODE_IN_PROGRESS);
    }
}
