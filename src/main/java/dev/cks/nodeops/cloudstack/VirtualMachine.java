package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Optional;

/**
 * A VM as listVirtualMachines (and the {@code virtualmachines} of a Kubernetes cluster) returns
 * it; only the fields the operator reads. Note {@code hostname} is the hypervisor host the VM runs
 * on, not the guest's host name.
 *
 * <p>Which fields are there depends on the call: UserVmJoinDaoImpl.newUserVmResponse fills
 * {@code isoid} only for the {@code iso} (or {@code all}) details, and a cluster's VM rows are built
 * with NIC details only, so they never carry an ISO. The last three fields exist only in a cluster's
 * rows (KubernetesUserVmResponse, CloudStack 4.20+/4.21+) and are null elsewhere.
 *
 * @param externalNode a node added with addNodesToKubernetesCluster (4.21+); scaleKubernetesCluster's
 *        {@code nodeids} skip it, only removeNodesFromKubernetesCluster removes it
 * @param etcdNode a dedicated etcd VM (4.21+), never a Kubernetes Node
 * @param kubernetesNodeVersion the Kubernetes version CloudStack has recorded for the node (4.20+)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VirtualMachine(
        @JsonProperty("id") String id,
        @JsonProperty("name") String name,
        @JsonProperty("displayname") String displayName,
        @JsonProperty("instancename") String instanceName,
        @JsonProperty("state") String state,
        @JsonProperty("created") String created,
        @JsonProperty("lastupdated") String lastUpdated,
        @JsonProperty("account") String account,
        @JsonProperty("domainid") String domainId,
        @JsonProperty("domain") String domain,
        @JsonProperty("projectid") String projectId,
        @JsonProperty("project") String project,
        @JsonProperty("zoneid") String zoneId,
        @JsonProperty("zonename") String zoneName,
        @JsonProperty("hostid") String hostId,
        @JsonProperty("hostname") String hostName,
        @JsonProperty("templateid") String templateId,
        @JsonProperty("serviceofferingid") String serviceOfferingId,
        @JsonProperty("isoid") String isoId,
        @JsonProperty("isoname") String isoName,
        @JsonProperty("isexternalnode") Boolean externalNode,
        @JsonProperty("isetcdnode") Boolean etcdNode,
        @JsonProperty("kubernetesnodeversion") String kubernetesNodeVersion) {

    public Optional<Instant> createdAt() {
        return CloudStackTimestamps.parse(created);
    }

    public boolean isRunning() {
        return "Running".equalsIgnoreCase(state);
    }

    public boolean isExternalNode() {
        return Boolean.TRUE.equals(externalNode);
    }

    public boolean isEtcdNode() {
        return Boolean.TRUE.equals(etcdNode);
    }

    /** Destroyed, Expunging and Expunged VMs are gone for the cluster even if still listed. */
    public boolean isGoingAway() {
        return "Destroyed".equalsIgnoreCase(state) || "Expunging".equalsIgnoreCase(state)
                || "Expunged".equalsIgnoreCase(state);
    }
}
