package dev.cks.nodeops.cloudstack.simulator;

import java.time.Instant;

/** A VM held by the simulator. Mutated only through {@link CloudStackSimulator}, under its lock. */
public final class SimulatedVm {

    private final String id;
    private final String name;
    private final Owner owner;
    private final Instant created;
    private final String hostName;
    private volatile String state;
    private volatile String clusterId;
    private volatile NodeRole role;
    private volatile String isoId;
    private volatile boolean externalNode;
    private volatile String nodeVersion;

    SimulatedVm(String id, String name, Owner owner, Instant created, String hostName, String state) {
        this.id = id;
        this.name = name;
        this.owner = owner;
        this.created = created;
        this.hostName = hostName;
        this.state = state;
        this.role = NodeRole.NONE;
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

    public Instant created() {
        return created;
    }

    public String hostName() {
        return hostName;
    }

    public String state() {
        return state;
    }

    public String clusterId() {
        return clusterId;
    }

    public NodeRole role() {
        return role;
    }

    public String isoId() {
        return isoId;
    }

    void setState(String state) {
        this.state = state;
    }

    void setCluster(String clusterId, NodeRole role) {
        this.clusterId = clusterId;
        this.role = role;
    }

    void setIsoId(String isoId) {
        this.isoId = isoId;
    }

    /** Added with addNodesToKubernetesCluster (CloudStack 4.21+): scaleKubernetesCluster's nodeids skip it. */
    public boolean externalNode() {
        return externalNode;
    }

    void setExternalNode(boolean externalNode) {
        this.externalNode = externalNode;
    }

    /** The map row's kubernetes_node_version: what CloudStack believes the node runs. */
    public String nodeVersion() {
        return nodeVersion;
    }

    void setNodeVersion(String nodeVersion) {
        this.nodeVersion = nodeVersion;
    }
}
