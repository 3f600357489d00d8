package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A CKS cluster as listKubernetesClusters returns it. The VM map arrives as {@code virtualmachines}
 * (full VM objects, servers since 4.16) or, on older servers, as {@code virtualmachineids}; both are
 * read and {@link #vmIds()} merges them.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubernetesCluster(
        @JsonProperty("id") String id,
        @JsonProperty("name") String name,
        @JsonProperty("description") String description,
        @JsonProperty("state") String state,
        @JsonProperty("clustertype") String clusterType,
        @JsonProperty("account") String account,
        @JsonProperty("domainid") String domainId,
        @JsonProperty("domain") String domain,
        @JsonProperty("projectid") String projectId,
        @JsonProperty("project") String project,
        @JsonProperty("zoneid") String zoneId,
        @JsonProperty("zonename") String zoneName,
        @JsonProperty("kubernetesversionid") String kubernetesVersionId,
        @JsonProperty("kubernetesversionname") String kubernetesVersionName,
        @JsonProperty("size") Long size,
        @JsonProperty("controlnodes") Long controlNodes,
        @JsonProperty("masternodes") Long masterNodes,
        @JsonProperty("etcdnodes") Long etcdNodes,
        @JsonProperty("autoscalingenabled") Boolean autoscalingEnabled,
        @JsonProperty("minsize") Long minSize,
        @JsonProperty("maxsize") Long maxSize,
        @JsonProperty("endpoint") String endpoint,
        @JsonProperty("created") String created,
        @JsonProperty("virtualmachines") List<VirtualMachine> virtualMachines,
        @JsonProperty("virtualmachineids") List<String> virtualMachineIds) {

    public static final String CLOUD_MANAGED = "CloudManaged";
    public static final String EXTERNAL_MANAGED = "ExternalManaged";

    public KubernetesCluster {
        virtualMachines = virtualMachines == null ? List.of() : List.copyOf(virtualMachines);
        virtualMachineIds = virtualMachineIds == null ? List.of() : List.copyOf(virtualMachineIds);
    }

    /** Every VM id of the cluster's VM map, from whichever field the server filled. */
    public Set<String> vmIds() {
        Set<String> ids = new LinkedHashSet<>();
        virtualMachines.forEach(vm -> ids.add(vm.id()));
        ids.addAll(virtualMachineIds);
        return ids;
    }

    public boolean isAutoscalingEnabled() {
        return Boolean.TRUE.equals(autoscalingEnabled);
    }

    /** Servers before {@code clustertype} existed only had clusters CloudStack itself provisioned. */
    public boolean isCloudManaged() {
        return clusterType == null || CLOUD_MANAGED.equalsIgnoreCase(clusterType);
    }

    /** {@code controlnodes} replaced {@code masternodes}; newer servers still send both. */
    public long controlNodeCount() {
        if (controlNodes != null) {
            return controlNodes;
        }
        return masterNodes == null ? 0 : masterNodes;
    }

    /** Where the cluster's VMs are listed: its project, else its account. */
    public OwnerScope owner() {
        if (projectId != null && !projectId.isBlank()) {
            return OwnerScope.project(projectId);
        }
        return account != null && domainId != null ? OwnerScope.account(account, domainId) : OwnerScope.CALLER;
    }
}
