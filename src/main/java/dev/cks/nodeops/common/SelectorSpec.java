package dev.cks.nodeops.common;

import io.fabric8.generator.annotation.ValidationRule;

/**
 * A part of a spec that selects with a field {@code selector} holding a metav1.LabelSelector (the nodes of a NodeUpgrade
 * or DrainReport, the pods of a spec.drain): the rules Kubernetes' own validation of a label selector has, once for every
 * such field. A subclass declares the field, with the description of what it selects; the CRD generator takes a
 * superclass's class rules as the subclass's own, after the subclass's.
 */
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_KEYS, message = LabelSelectorRules.SELECTOR_LABEL_KEYS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_LABEL_VALUES, message = LabelSelectorRules.SELECTOR_LABEL_VALUES_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_OPERATORS, message = LabelSelectorRules.SELECTOR_OPERATORS_MESSAGE)
@ValidationRule(value = LabelSelectorRules.SELECTOR_EXPRESSIONS, message = LabelSelectorRules.SELECTOR_EXPRESSIONS_MESSAGE)
public abstract class SelectorSpec {
}
