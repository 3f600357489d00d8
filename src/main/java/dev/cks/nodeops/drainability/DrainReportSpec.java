package dev.cks.nodeops.drainability;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.LabelSelectorRules;
import dev.cks.nodeops.upgrade.NodeSelection;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;

@ValidationRule(value = LabelSelectorRules.NODE_SELECTOR_KEYS, message = LabelSelectorRules.NODE_SELECTOR_KEYS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.NODE_SELECTOR_VALUES, message = LabelSelectorRules.NODE_SELECTOR_VALUES_MESSAGE)
@ValidationRule(value = LabelSelectorRules.ONE_NODE_SELECTOR, message = LabelSelectorRules.ONE_NODE_SELECTOR_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_KEYS, message = LabelSelectorRules.SELECTOR_LABEL_KEYS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_VALUES, message = LabelSelectorRules.SELECTOR_LABEL_VALUES_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_OPERATORS, message = LabelSelectorRules.SELECTOR_OPERATORS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_EXPRESSIONS, message = LabelSelectorRules.SELECTOR_EXPRESSIONS_MESSAGE)
public class DrainReportSpec {
    @JsonPropertyDescription("The nodes to report on, as a Kubernetes label selector: every matchLabels entry and matchExpressions requirement"
            + " must hold. Unset or empty reports every node.")
    private LabelSelector selector;

    @JsonPropertyDescription("Deprecated, removed in a later release: use selector (selector.matchLabels takes the same map). Labels a node must"
            + " have to be reported. Not together with selector.")
    @Size(max = 64)
    private Map<String, String> nodeSelector;

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

    public LabelSelector getSelector() { return selector; }
    public void setSelector(LabelSelector selector) { this.selector = selector; }
    public Map<String, String> getNodeSelector() { return nodeSelector; }
    public void setNodeSelector(Map<String, String> nodeSelector) { this.nodeSelector = nodeSelector; }
    public Integer getIntervalSeconds() { return intervalSeconds; }
    public void setIntervalSeconds(Integer intervalSeconds) { this.intervalSeconds = intervalSeconds; }
    public DrainAssumptions getDrain() { return drain; }
    public void setDrain(DrainAssumptions drain) { this.drain = drain; }
    public Integer getMaxEventsPerRun() { return maxEventsPerRun; }
    public void setMaxEventsPerRun(Integer maxEventsPerRun) { this.maxEventsPerRun = maxEventsPerRun; }
    public Boolean getSuspend() { return suspend; }
    public void setSuspend(Boolean suspend) { this.suspend = suspend; }

    /** The nodes selector (or the deprecated nodeSelector) selects; not a bean property, so it stays out of the CRD. */
    public NodeSelection nodeSelection() {
        return NodeSelection.of(selector, nodeSelector);
    }
}
