package dev.cks.nodeops.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything one audit pass compares, read before any decision is made.
 *
 * @param ownerVms the owner's VMs; may include VMs of other clusters and unrelated VMs
 * @param otherClustersMappedIds ids in the VM maps of the owner's other CKS clusters
 * @param gracePeriod how long a new or just-changed VM may be out of step before it counts as drift
 * @param earlierMappedVms id and name of each mapped VM an earlier run found destroyed, expunged,
 *        in error or missing: CloudStack drops an expunged VM from the cluster's answer while still
 *        counting it, so this memory is what keeps its finding alive
 */
public record AuditSnapshot(ClusterView cluster, List<OwnedVm> ownerVms, Set<String> otherClustersMappedIds,
        ClusterNodes nodes, Instant now, Duration gracePeriod, Map<String, String> earlierMappedVms) {
    public AuditSnapshot {
        ownerVms = ownerVms == null ? List.of() : List.copyOf(ownerVms);
        otherClustersMappedIds = otherClustersMappedIds == null ? Set.of() : Set.copyOf(otherClustersMappedIds);
        earlierMappedVms = earlierMappedVms == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(earlierMappedVms));
    }

    public AuditSnapshot(ClusterView cluster, List<OwnedVm> ownerVms, Set<String> otherClustersMappedIds,
            ClusterNodes nodes, Instant now, Duration gracePeriod) {
        this(cluster, ownerVms, otherClustersMappedIds, nodes, now, gracePeriod, null);
    }
}
