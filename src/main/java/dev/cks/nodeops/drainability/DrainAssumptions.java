package dev.cks.nodeops.drainability;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.LabelSelectorRules;
import dev.cks.nodeops.drain.DrainOptions;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * The few drain options that change what blocks a drain, with the defaults of spec.drain of a NodeUpgrade or
 * ScaleDown; timeouts, retries and escalation only change how long a drain tries, so they are not here.
 */
@ValidationRule(value = LabelSelectorRules.ONE_POD_SELECTOR, message = LabelSelectorRules.ONE_POD_SELECTOR_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_KEYS, message = LabelSelectorRules.SELECTOR_LABEL_KEYS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_VALUES, message = LabelSelectorRules.SELECTOR_LABEL_VALUES_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_OPERATORS, message = LabelSelectorRules.SELECTOR_OPERATORS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_EXPRESSIONS, message = LabelSelectorRules.SELECTOR_EXPRESSIONS_MESSAGE)
public class DrainAssumptions {
    @JsonPropertyDescription("As spec.drain.ignoreDaemonSets of an operation: false makes every DaemonSet pod block.")
    @Default("true")
    private Boolean ignoreDaemonSets = true;

    @JsonPropertyDescription("As spec.drain.deleteEmptyDirData of an operation: false makes pods with emptyDir volumes block.")
    @Default("true")
    private Boolean deleteEmptyDirData = true;

    @JsonPropertyDescription("As spec.drain.force of an operation: true lets pods that no controller manages go.")
    @Default("false")
    private Boolean force = false;

    @JsonPropertyDescription("As spec.drain.selector of an operation, a Kubernetes label selector: only pods it matches count. Unset or empty"
            + " means all pods.")
    private LabelSelector selector;

    @JsonPropertyDescription("Deprecated, removed in a later release: use selector. As spec.drain.podSelector of an operation: only pods"
            + " matching this kubectl-style label selector count; empty means all pods. Not together with selector.")
    @Size(max = 1024)
    private String podSelector = "";

    /** The operation's drain options these assume. */
    public DrainOptions toDrainOptions() {
        DrainOptions options = new DrainOptions();
        options.setIgnoreDaemonSets(!Boolean.FALSE.equals(ignoreDaemonSets));
        options.setDeleteEmptyDirData(!Boolean.FALSE.equals(deleteEmptyDirData));
        options.setForce(Boolean.TRUE.equals(force));
        options.setSelector(selector);
        options.setPodSelector(podSelector == null ? "" : podSelector);
        return options;
    }

    public Boolean getIgnoreDaemonSets() { return ignoreDaemonSets; }
    public void setIgnoreDaemonSets(Boolean ignoreDaemonSets) { this.ignoreDaemonSets = ignoreDaemonSets; }
    public Boolean getDeleteEmptyDirData() { return deleteEmptyDirData; }
    public void setDeleteEmptyDirData(Boolean deleteEmptyDirData) { this.deleteEmptyDirData = deleteEmptyDirData; }
    public Boolean getForce() { return force; }
    public void setForce(Boolean force) { this.force = force; }
    public LabelSelector getSelector() { return selector; }
    public void setSelector(LabelSelector selector) { this.selector = selector; }
    public String getPodSelector() { return podSelector; }
    public void setPodSelector(String podSelector) { this.podSelector = podSelector; }
}
