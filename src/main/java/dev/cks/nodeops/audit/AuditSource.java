package dev.cks.nodeops.audit;

import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What the audit reads from CloudStack. The audit depends on this port only, so its decisions are
 * tested with a fake; {@link CloudStackAuditSource} is the production implementation. Every method
 * throws {@link AuditSourceException} when CloudStack cannot answer.
 */
public interface AuditSource {
    /**
     * The cluster with this id; with a blank id the operator's configured one, or else the one whose VM
     * map names these Nodes.
     */
    ClusterLookup cluster(String clusterId, Collection<String> nodeNames);

    /** The VMs of the cluster's owner (account or project) that may be the cluster's, with their states. */
    List<OwnedVm> ownerVms(ClusterView cluster);

    /** Ids in the VM maps of the owner's other CKS clusters. */
    Set<String> otherClustersMappedIds(ClusterView cluster);
}
