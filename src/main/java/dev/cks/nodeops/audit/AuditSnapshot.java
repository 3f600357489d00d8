package dev.cks.nodeops.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Everything one audit pass compares, read before any decision is made.
 *
 * @param ownerVms the owner's VMs; may include VMs of other clusters and unrelated VMs
 * @param otherClustersMappedIds ids in the VM maps of the owner's other CKS clusters
 * @param gracePeriod how long a new or just-changed VM may be out of step before it counts as drift
 */
public record AuditSnapshot(ClusterView cluster, List<OwnedVm> ownerVms, Set<String> otherClustersMappedIds,
        ClusterNodes nodes, Instant now, Duration gracePeriod) {
    public AuditSnapshot {
        ownerVms = ownerVms == null ? List.of() : List.copyOf(ownerVms);
        otherClustersMappedIds = otherClustersMappedIds == null ? Set.of() : Set.copyOf(otherClustersMappedIds);
    }
}
