package dev.cks.nodeops.audit;

import java.util.Optional;

/** The CKS cluster an audit is about, or a sentence saying why none could be picked. */
public record ClusterLookup(Optional<ClusterView> cluster, String refusal) {
    public static ClusterLookup found(ClusterView cluster) {
        return new ClusterLookup(Optional.of(cluster), null);
    }

    public static ClusterLookup refused(String why) {
        return new ClusterLookup(Optional.empty(), why);
    }
}
