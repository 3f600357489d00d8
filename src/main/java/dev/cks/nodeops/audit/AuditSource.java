package dev.cks.nodeops.audit;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the audit reads from CloudStack. The reconciler depends on this port only, so its decisions
 * are tested with a fake; the production implementation adapts the CloudStack client:
 * <ul>
 * <li>{@link #cluster}: {@code listKubernetesClusters id=…}; {@code virtualmachines} rows become
 * {@link ClusterView.MappedVm}s with name and state, ids only in {@code virtualmachineids} become rows
 * with name and state null;</li>
 * <li>{@link #ownerVms}: {@code listVirtualMachines listall=true} in the cluster's account or project,
 * {@code created}/{@code lastupdated} as the VM's creation and last change;</li>
 * <li>{@link #otherClustersMappedIds}: {@code listKubernetesClusters} of the same owner, every VM id of
 * every map but this cluster's.</li>
 * </ul>
 * Every method throws {@link AuditSourceException} when CloudStack cannot answer.
 */
public interface AuditSource {
    Optional<ClusterView> cluster(String clusterId);

    List<OwnedVm> ownerVms(ClusterView cluster);

    Set<String> otherClustersMappedIds(ClusterView cluster);
}
