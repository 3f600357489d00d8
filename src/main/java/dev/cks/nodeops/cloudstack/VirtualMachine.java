package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.Optional;

/**
 * A VM as listVirtualMachines (and the {@code virtualmachines} of a Kubernetes cluster) returns
 * it; only the fields the operator reads. Note {@code hostname} is the hypervisor host the VM runs
 * on, not the guest's host name.
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
        @JsonProperty("isoname") String isoName) {

    public Optional<Instant> createdAt() {
        return CloudStackTimestamps.parse(created);
    }

    public boolean isRunning() {
        return "Running".equalsIgnoreCase(state);
    }
}
