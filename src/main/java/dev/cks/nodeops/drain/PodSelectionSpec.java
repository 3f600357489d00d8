package dev.cks.nodeops.drain;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.LabelSelectorRules;
import dev.cks.nodeops.common.SelectorSpec;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * The fields of a spec.drain that choose its pods, with their admission rules (the selector's own: {@link SelectorSpec}):
 * those of an operation ({@link DrainOptions}) and of a DrainReport's assumed drain, so the three kinds select pods, and are
 * checked, one way. The CRD generator takes a superclass's fields and class rules as the subclass's own.
 */
@ValidationRule(value = LabelSelectorRules.ONE_POD_SELECTOR, message = LabelSelectorRules.ONE_POD_SELECTOR_MESSAGE)
public class PodSelectionSpec extends SelectorSpec {
    @JsonPropertyDescription("The pods to drain, as a Kubernetes label selector: every matchLabels entry and matchExpressions requirement must"
            + " hold. Unset or empty drains every pod (the other options still apply); pods it leaves out stay on the node.")
    private LabelSelector selector;

    @JsonPropertyDescription("Deprecated, removed in a later release: use selector ('app=web,tier!=cache' is selector: {matchLabels: {app: web},"
            + " matchExpressions: [{key: tier, operator: NotIn, values: [cache]}]}). Only drain pods matching this kubectl-style label"
            + " selector; empty means all pods. Not together with selector.")
    private String podSelector = "";

    /**
     * The pods these fields select; not a bean property (no "get"), so it stays out of the CRD.
     *
     * @throws PodSelector.InvalidSelector when the deprecated podSelector cannot be parsed
     */
    public PodSelector podSelection() {
        return PodSelection.of(selector, podSelector);
    }

    public LabelSelector getSelector() { return selector; }
    public void setSelector(LabelSelector selector) { this.selector = selector; }
    public String getPodSelector() { return podSelector; }
    public void setPodSelector(String podSelector) { this.podSelector = podSelector; }
}
