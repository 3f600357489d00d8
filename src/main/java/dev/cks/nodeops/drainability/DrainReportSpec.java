package dev.cks.nodeops.drainability;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.upgrade.NodeSelectionSpec;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Which nodes, and the rules of that: {@link NodeSelectionSpec}. */
public class DrainReportSpec extends NodeSelectionSpec {
    @JsonPropertyDescription("Seconds between two passes over the nodes.")
    @Default("300")
    @Min(10)
    @Max(86400)
    private Integer intervalSeconds = 300;

    @JsonPropertyDescription("The drain options to predict with: set them as your NodeUpgrades and ScaleDowns set theirs.")
    private DrainAssumptions drain = new DrainAssumptions();

    @JsonPropertyDescription("Most Warning or Normal events per pass; more changes add one summary event.")
    @Default("5")
    @Min(1)
    @Max(100)
    private Integer maxEventsPerRun = 5;

    @JsonPropertyDescription("Stop reporting (and exporting cks_node_drainable) until set back to false.")
    @Default("false")
    private Boolean suspend = false;

    public Integer getIntervalSeconds() { return intervalSeconds; }
    public void setIntervalSeconds(Integer intervalSeconds) { this.intervalSeconds = intervalSeconds; }
    public DrainAssumptions getDrain() { return drain; }
    public void setDrain(DrainAssumptions drain) { this.drain = drain; }
    public Integer getMaxEventsPerRun() { return maxEventsPerRun; }
    public void setMaxEventsPerRun(Integer maxEventsPerRun) { this.maxEventsPerRun = maxEventsPerRun; }
    public Boolean getSuspend() { return suspend; }
    public void setSuspend(Boolean suspend) { this.suspend = suspend; }
}
