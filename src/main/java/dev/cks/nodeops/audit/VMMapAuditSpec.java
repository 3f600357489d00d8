package dev.cks.nodeops.audit;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.cloudstack.CloudStackId;

import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(value = "!has(self.clusterId) || self.clusterId == '' || self.clusterId.matches('" + CloudStackId.PATTERN + "')",
        message = "clusterId must be a CloudStack id (a UUID), as listKubernetesClusters shows it, or empty")
public class VMMapAuditSpec {
    @JsonPropertyDescription("CloudStack id of the CKS cluster; empty uses the operator's configured one or finds it by node names.")
    @Size(max = 36)
    private String clusterId = "";

    // No schema defaults here: an unset value means the operator's setting (Helm values audit.intervalSeconds
    // and audit.graceSeconds), which a schema default would always hide.
    @JsonPropertyDescription("Seconds between two audit runs; unset uses the operator's setting (300 unless changed).")
    @Min(30)
    @Max(86400)
    private Integer intervalSeconds;

    @JsonPropertyDescription("Seconds a VM or Node may be new or changed before it counts as drift; unset uses the operator's setting (900 unless changed).")
    @Min(0)
    private Integer gracePeriodSeconds;

    @JsonPropertyDescription("Most Warning events per run; more new findings add one summary event.")
    @Default("5")
    @Min(1)
    @Max(100)
    private Integer maxEventsPerRun = 5;

    @JsonPropertyDescription("Stop auditing until set back to false.")
    @Default("false")
    private Boolean suspend = false;

    public String getClusterId() { return clusterId; }
    public void setClusterId(String clusterId) { this.clusterId = clusterId; }
    public Integer getIntervalSeconds() { return intervalSeconds; }
    public void setIntervalSeconds(Integer intervalSeconds) { this.intervalSeconds = intervalSeconds; }
    public Integer getGracePeriodSeconds() { return gracePeriodSeconds; }
    public void setGracePeriodSeconds(Integer gracePeriodSeconds) { this.gracePeriodSeconds = gracePeriodSeconds; }
    public Integer getMaxEventsPerRun() { return maxEventsPerRun; }
    public void setMaxEventsPerRun(Integer maxEventsPerRun) { this.maxEventsPerRun = maxEventsPerRun; }
    public Boolean getSuspend() { return suspend; }
    public void setSuspend(Boolean suspend) { this.suspend = suspend; }
}
