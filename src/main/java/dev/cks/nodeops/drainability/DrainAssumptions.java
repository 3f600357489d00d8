package dev.cks.nodeops.drainability;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.PodSelectionSpec;
import io.fabric8.generator.annotation.Default;

/**
 * The few drain options that change what blocks a drain, with the defaults of spec.drain of a NodeUpgrade or
 * ScaleDown; timeouts, retries and escalation only change how long a drain tries, so they are not here. Which pods
 * count: {@link PodSelectionSpec}, as for an operation.
 */
public class DrainAssumptions extends PodSelectionSpec {
    @JsonPropertyDescription("As spec.drain.ignoreDaemonSets of an operation: false makes every DaemonSet pod block.")
    @Default("true")
    private Boolean ignoreDaemonSets = true;

    @JsonPropertyDescription("As spec.drain.deleteEmptyDirData of an operation: false makes pods with emptyDir volumes block.")
    @Default("true")
    private Boolean deleteEmptyDirData = true;

    @JsonPropertyDescription("As spec.drain.force of an operation: true lets pods that no controller manages go.")
    @Default("false")
    private Boolean force = false;

    /** The operation's drain options these assume. */
    public DrainOptions toDrainOptions() {
        DrainOptions options = new DrainOptions();
        options.setIgnoreDaemonSets(!Boolean.FALSE.equals(ignoreDaemonSets));
        options.setDeleteEmptyDirData(!Boolean.FALSE.equals(deleteEmptyDirData));
        options.setForce(Boolean.TRUE.equals(force));
        options.setSelector(getSelector());
        options.setPodSelector(getPodSelector() == null ? "" : getPodSelector());
        return options;
    }

    public Boolean getIgnoreDaemonSets() { return ignoreDaemonSets; }
    public void setIgnoreDaemonSets(Boolean ignoreDaemonSets) { this.ignoreDaemonSets = ignoreDaemonSets; }
    public Boolean getDeleteEmptyDirData() { return deleteEmptyDirData; }
    public void setDeleteEmptyDirData(Boolean deleteEmptyDirData) { this.deleteEmptyDirData = deleteEmptyDirData; }
    public Boolean getForce() { return force; }
    public void setForce(Boolean force) { this.force = force; }
}
