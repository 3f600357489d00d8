package dev.cks.nodeops.cloudstack.simulator;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A CKS cluster held by the simulator. The VM map is kept apart from the VMs themselves, as
 * CloudStack's kubernetes_cluster_vm_map table is: destroying a VM directly leaves its entry.
 */
public final class SimulatedCluster {

    private final String id;
    private final String name;
    private final Owner owner;
    private final String clusterType;
    private final Instant created;
    private final List<String> vmMap = new ArrayList<>();
    private volatile String state = "Running";
    private volatile String versionId;
    private volatile long size;
    private volatile long controlNodes;
    private volatile long etcdNodes;
    private volatile boolean autoscalingEnabled;
    private volatile Long minSize;
    private volatile Long maxSize;

    SimulatedCluster(String id, String name, Owner owner, String clusterType, String versionId, Instant created) {
        this.id = id;
        this.name = name;
        this.owner = owner;
        this.clusterType = clusterType;
        this.versionId = versionId;
        this.created = created;
    }

    public String id() {
        return id;
    }

    public String name() {
        return name;
    }

    public Owner owner() {
        return owner;
    }

    public String clusterType() {
        return clusterType;
    }

    public Instant created() {
        return created;
    }

    public String state() {
        return state;
    }

    public String versionId() {
        return versionId;
    }

    /** Worker count, as CloudStack reports {@code size}. */
    public long size() {
        return size;
    }

    public long controlNodes() {
        return controlNodes;
    }

    public long etcdNodes() {
        return etcdNodes;
    }

    public boolean autoscalingEnabled() {
        return autoscalingEnabled;
    }

    public Long minSize() {
        return minSize;
    }

    public Long maxSize() {
        return maxSize;
    }

    void setAutoscaling(boolean enabled, Long minSize, Long maxSize) {
        this.autoscalingEnabled = enabled;
        this.minSize = minSize;
        this.maxSize = maxSize;
    }

    /** Workers, control and etcd nodes: what CloudStack's state scanner expects to find in the map. */
    public long totalNodeCount() {
        return size + controlNodes + etcdNodes;
    }

    /** A copy of the VM map's ids, in insertion order. */
    public synchronized List<String> vmIds() {
        return List.copyOf(vmMap);
    }

    synchronized void addToMap(String vmId, NodeRole role) {
        vmMap.add(vmId);
        switch (role) {
            case CONTROL -> controlNodes++;
            case ETCD -> etcdNodes++;
            default -> size++;
        }
    }

    synchronized boolean removeFromMap(String vmId) {
        return vmMap.remove(vmId);
    }

    synchronized void uncount(NodeRole role) {
        switch (role) {
            case CONTROL -> controlNodes--;
            case ETCD -> etcdNodes--;
            default -> size--;
        }
    }

    void setSize(long size) {
        this.size = size;
    }

    void setControlNodes(long controlNodes) {
        this.controlNodes = controlNodes;
    }

    void setState(String state) {
        this.state = state;
    }

    void setVersionId(String versionId) {
        this.versionId = versionId;
    }
}
