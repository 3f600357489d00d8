package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;

/** A Kubernetes version CKS can install, with the binaries ISO that carries it. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record KubernetesSupportedVersion(
        @JsonProperty("id") String id,
        @JsonProperty("name") String name,
        @JsonProperty("semanticversion") String semanticVersion,
        @JsonProperty("isoid") String isoId,
        @JsonProperty("isoname") String isoName,
        @JsonProperty("isostate") String isoState,
        @JsonProperty("state") String state,
        @JsonProperty("zoneid") String zoneId,
        @JsonProperty("supportsha") Boolean supportsHa,
        @JsonProperty("supportsautoscaling") Boolean supportsAutoscaling,
        @JsonProperty("mincpunumber") Integer minCpuNumber,
        @JsonProperty("minmemory") Integer minMemory,
        @JsonProperty("created") String created) {

    /** Usable for an upgrade: the version is enabled and its ISO finished uploading. */
    public boolean isUsable() {
        return "Enabled".equalsIgnoreCase(state) && "Ready".equalsIgnoreCase(isoState);
    }
}
