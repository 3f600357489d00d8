package dev.cks.nodeops.upgrade;

import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.common.LabelSelectorRules;
import dev.cks.nodeops.common.SelectorSpec;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * The spec fields that choose the nodes of a NodeUpgrade or a DrainReport, spec.selector and the deprecated
 * spec.nodeSelector, with their admission rules (the selector's own: {@link SelectorSpec}), so both kinds select nodes,
 * and are checked, one way. The CRD generator takes a superclass's fields and class rules as the subclass's own (after
 * the subclass's rules).
 */
@ValidationRule(value = LabelSelectorRules.NODE_SELECTOR_KEYS, message = LabelSelectorRules.NODE_SELECTOR_KEYS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.NODE_SELECTOR_VALUES, message = LabelSelectorRules.NODE_SELECTOR_VALUES_MESSAGE)
@ValidationRule(value = LabelSelectorRules.ONE_NODE_SELECTOR, message = LabelSelectorRules.ONE_NODE_SELECTOR_MESSAGE)
public class NodeSelectionSpec extends SelectorSpec {
    @JsonPropertyDescription("The nodes to upgrade (a NodeUpgrade) or report on (a DrainReport), as a Kubernetes label selector: every"
            + " matchLabels entry and matchExpressions requirement must hold. Unset or empty selects every node. Workers only: matchExpressions"
            + " [{key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}].")
    private LabelSelector selector;

    @JsonPropertyDescription("Deprecated, removed in a later release: use selector (selector.matchLabels takes the same map). Labels a node must"
            + " have to be selected. Not together with selector.")
    @Size(max = 64)
    private Map<String, String> nodeSelector;

    /** The nodes selector (or the deprecated nodeSelector) selects; not a bean property (no "get"), so it stays out of the CRD. */
    public NodeSelection nodeSelection() {
        return NodeSelection.of(selector, nodeSelector);
    }

    public LabelSelector getSelector() { return selector; }
    public void setSelector(LabelSelector selector) { this.selector = selector; }
    public Map<String, String> getNodeSelector() { return nodeSelector; }
    public void setNodeSelector(Map<String, String> nodeSelector) { this.nodeSelector = nodeSelector; }
}
