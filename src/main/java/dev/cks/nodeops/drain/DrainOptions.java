package dev.cks.nodeops.drain;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;

/** How nodes are drained; the names follow `kubectl drain`'s flags. */
public class DrainOptions {
    public static final int DEFAULT_TIMEOUT_SECONDS = 300;

    @JsonPropertyDescription("Timeout of one drain attempt in seconds; a value below 1 means the default (300).")
    @Default("300")
    private Integer timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;

    @JsonPropertyDescription("How many times a failed drain is tried again; attempts = retries + 1.")
    @Default("2")
    @Min(0)
    private Integer retries = 2;

    @JsonPropertyDescription("Seconds to wait between drain attempts.")
    @Default("30")
    @Min(0)
    private Integer retryIntervalSeconds = 30;

    @JsonPropertyDescription("Grace period given to each pod; -1 uses the pod's own terminationGracePeriodSeconds.")
    @Default("-1")
    @Min(-1)
    private Integer gracePeriodSeconds = -1;

    @JsonPropertyDescription("Leave DaemonSet-managed pods on the node (they would be recreated there anyway).")
    @Default("true")
    private Boolean ignoreDaemonSets = true;

    @JsonPropertyDescription("Evict pods that use emptyDir volumes; their local data is lost.")
    @Default("true")
    private Boolean deleteEmptyDirData = true;

    @JsonPropertyDescription("Also evict pods that no controller manages; they are not recreated anywhere.")
    @Default("false")
    private Boolean force = false;

    @JsonPropertyDescription("Delete pods directly instead of evicting them. This BYPASSES PodDisruptionBudgets.")
    @Default("false")
    private Boolean disableEviction = false;

    @JsonPropertyDescription("Pods whose deletionTimestamp is older than this many seconds are not waited for; 0 waits for all.")
    @Default("0")
    @Min(0)
    private Integer skipWaitForDeleteTimeoutSeconds = 0;

    @JsonPropertyDescription("Only drain pods matching this label selector (e.g. 'app=web,tier!=cache'); empty means all pods.")
    private String podSelector = "";

    public int effectiveTimeoutSeconds() {
        return timeoutSeconds == null || timeoutSeconds < 1 ? DEFAULT_TIMEOUT_SECONDS : timeoutSeconds;
    }

    public int attempts() {
        return (retries == null ? 2 : Math.max(0, retries)) + 1;
    }

    public Integer getTimeoutSeconds() { return timeoutSeconds; }
    public void setTimeoutSeconds(Integer timeoutSeconds) { this.timeoutSeconds = timeoutSeconds; }
    public Integer getRetries() { return retries; }
    public void setRetries(Integer retries) { this.retries = retries; }
    public Integer getRetryIntervalSeconds() { return retryIntervalSeconds; }
    public void setRetryIntervalSeconds(Integer retryIntervalSeconds) { this.retryIntervalSeconds = retryIntervalSeconds; }
    public Integer getGracePeriodSeconds() { return gracePeriodSeconds; }
    public void setGracePeriodSeconds(Integer gracePeriodSeconds) { this.gracePeriodSeconds = gracePeriodSeconds; }
    public Boolean getIgnoreDaemonSets() { return ignoreDaemonSets; }
    public void setIgnoreDaemonSets(Boolean ignoreDaemonSets) { this.ignoreDaemonSets = ignoreDaemonSets; }
    public Boolean getDeleteEmptyDirData() { return deleteEmptyDirData; }
    public void setDeleteEmptyDirData(Boolean deleteEmptyDirData) { this.deleteEmptyDirData = deleteEmptyDirData; }
    public Boolean getForce() { return force; }
    public void setForce(Boolean force) { this.force = force; }
    public Boolean getDisableEviction() { return disableEviction; }
    public void setDisableEviction(Boolean disableEviction) { this.disableEviction = disableEviction; }
    public Integer getSkipWaitForDeleteTimeoutSeconds() { return skipWaitForDeleteTimeoutSeconds; }
    public void setSkipWaitForDeleteTimeoutSeconds(Integer v) { this.skipWaitForDeleteTimeoutSeconds = v; }
    public String getPodSelector() { return podSelector; }
    public void setPodSelector(String podSelector) { this.podSelector = podSelector; }
}
