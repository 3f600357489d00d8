package dev.cks.nodeops.audit;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A CKS cluster as the audit needs it: listKubernetesClusters' state, type and VM map.
 *
 * @param clusterType CloudManaged or ExternalManaged; null on servers that predate the field, where
 *        every cluster was CloudManaged
 * @param map the {@code virtualmachines} rows (or bare ids from {@code virtualmachineids}, with
 *        name and state null); may hold the same VM twice
 * @param owner whose VMs the cluster's are; null when not known
 * @param declaredVmCount how many VMs CloudStack counts for the cluster (workers, control and etcd
 *        nodes); null when not known
 */
public record ClusterView(String id, String name, String state, String clusterType, List<MappedVm> map, Owner owner,
        Integer declaredVmCount) {
    public static final String CLOUD_MANAGED = "CloudManaged";

    /**
     * One row of the VM map; name and state are what the cluster response embedded, if anything.
     *
     * @param recordedVersion the row's {@code kubernetesnodeversion} (CloudStack 4.20+), null when not sent
     */
    public record MappedVm(String id, String name, String state, String recordedVersion) {
        public MappedVm(String id, String name, String state) {
            this(id, name, state, null);
        }
    }

    /** The cluster's account (with its domain) or project. */
    public record Owner(String account, String domainId, String projectId) {
    }

    public ClusterView {
        map = map == null ? List.of() : List.copyOf(map);
    }

    public ClusterView(String id, String name, String state, String clusterType, List<MappedVm> map) {
        this(id, name, state, clusterType, map, null, null);
    }

    public boolean isCloudManaged() {
        return clusterType == null || clusterType.isBlank() || CLOUD_MANAGED.equalsIgnoreCase(clusterType);
    }

    /** Only a cluster CloudStack calls Running or Alert has a map worth comparing; others are mid-change. */
    public boolean isSettled() {
        return "Running".equalsIgnoreCase(state) || "Alert".equalsIgnoreCase(state);
    }

    public Set<String> mappedIds() {
        Set<String> ids = new LinkedHashSet<>();
        map.forEach(row -> ids.add(row.id()));
        return ids;
    }

    /** Whether the map or state differs from another reading of the same cluster; row order and duplicates don't count. */
    public boolean changedSince(ClusterView earlier) {
        return !String.valueOf(state).equalsIgnoreCase(String.valueOf(earlier.state()))
                || !mappedIds().equals(earlier.mappedIds());
    }
}
