package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;

/** How nodes are drained; the names follow `kubectl drain`'s flags. Which pods: {@link PodSelectionSpec}. */
public class DrainOptions extends PodSelectionSpec {
    public static final int DEFAULT_TIMEOUT_SECONDS = 300;

    // No schema defaults for these three: when a CR leaves them out, the operator's global settings
    // (Helm values drain.*) apply, which a schema default would hide.
    @JsonPropertyDescription("Timeout of one drain attempt in seconds; unset or 0 means the operator's setting (300 unless changed).")
    @Min(0)
    @Max(86400)
    private Integer timeoutSeconds;

    @JsonPropertyDescription("How many times a failed drain is tried again; attempts = retries + 1. Unset means the operator's setting (2 unless changed).")
    @Min(0)
    @Max(100)
    private Integer retries;

    @JsonPropertyDescription("Seconds to wait between drain attempts. Unset means the operator's setting (30 unless changed).")
    @Min(0)
    private Integer retryIntervalSeconds;

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

    @JsonPropertyDescription("What to do, step by step, while PodDisruptionBudgets keep the drain of a node blocked. Without it: a Warning event "
            + "after 10 s, and the drain gives up when its attempts are used up. The give-up step (SkipNode, Fail, RollBack) also applies when "
            + "the attempts run out first. Nothing is ever deleted without a DeletePods step and its selector.")
    @Size(max = 10)
    private List<EscalationStep> escalation = new ArrayList<>();

    /** The CR's drain options (may be null), with the operator's settings where the CR leaves a value unset. */
    public static DrainOptions effective(DrainOptions fromSpec, OperatorSettings.Drain defaults) {
        DrainOptions spec = fromSpec == null ? new DrainOptions() : fromSpec;
        DrainOptions resolved = new DrainOptions();
        resolved.timeoutSeconds = spec.timeoutSeconds == null || spec.timeoutSeconds < 1 ? defaults.timeoutSeconds() : spec.timeoutSeconds;
        resolved.retries = spec.retries == null ? defaults.retries() : spec.retries;
        resolved.retryIntervalSeconds = spec.retryIntervalSeconds == null ? defaults.retryIntervalSeconds() : spec.retryIntervalSeconds;
        resolved.gracePeriodSeconds = spec.gracePeriodSeconds;
        resolved.ignoreDaemonSets = spec.ignoreDaemonSets;
        resolved.deleteEmptyDirData = spec.deleteEmptyDirData;
        resolved.force = spec.force;
        resolved.disableEviction = spec.disableEviction;
        resolved.skipWaitForDeleteTimeoutSeconds = spec.skipWaitForDeleteTimeoutSeconds;
        resolved.setSelector(spec.getSelector());
        resolved.setPodSelector(spec.getPodSelector());
        resolved.escalation = spec.escalation;
        return resolved;
    }

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
    public List<EscalationStep> getEscalation() { return escalation; }
    public void setEscalation(List<EscalationStep> escalation) { this.escalation = escalation == null ? new ArrayList<>() : escalation; }
}
