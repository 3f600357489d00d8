package dev.cks.nodeops.common;

/**
 * The admission rules (CEL) of the label selectors in our specs, with their messages: a field {@code selector} holding a
 * metav1.LabelSelector (the nodes of a NodeUpgrade or DrainReport, the pods of every {@code spec.drain}), and the
 * deprecated field each one replaces. A rule goes on the class that holds the fields, so {@code self} is that object.
 *
 * The selector rules check what Kubernetes' own validation of a metav1.LabelSelector checks (apimachinery
 * pkg/apis/meta/v1/validation ValidateLabelSelector): label keys and values, one of the four operators, values for In and
 * NotIn and none for Exists and DoesNotExist. The CRD bounds the sizes (CrdPostProcessor), which bounds their cost.
 */
public final class LabelSelectorRules {
    /** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters (values: the CRD caps them at 63). */
    private static final String LABEL_KEY = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
    private static final String LABEL_VALUE = "^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$";
    private static final String HAS_LABELS = "!has(self.selector) || !has(self.selector.matchLabels) || ";
    private static final String HAS_EXPRESSIONS = "!has(self.selector) || !has(self.selector.matchExpressions) || ";

    public static final String SELECTOR_LABEL_KEYS = HAS_LABELS + "self.selector.matchLabels.all(k, size(k) <= 317 && k.matches('" + LABEL_KEY + "'))";
    public static final String SELECTOR_LABEL_KEYS_MESSAGE = "selector.matchLabels keys must be label keys: an optional DNS subdomain prefix and '/',"
            + " then at most 63 letters, digits, '-', '_' or '.'";
    public static final String SELECTOR_LABEL_VALUES = HAS_LABELS + "self.selector.matchLabels.all(k, self.selector.matchLabels[k].matches('" + LABEL_VALUE + "'))";
    public static final String SELECTOR_LABEL_VALUES_MESSAGE = "selector.matchLabels values must be label values: at most 63 letters, digits, '-', '_'"
            + " or '.', starting and ending with a letter or digit";
    public static final String SELECTOR_OPERATORS = HAS_EXPRESSIONS + "self.selector.matchExpressions.all(e, e.operator in ['In', 'NotIn']"
            + " ? has(e.values) && size(e.values) > 0 : e.operator in ['Exists', 'DoesNotExist'] && (!has(e.values) || size(e.values) == 0))";
    public static final String SELECTOR_OPERATORS_MESSAGE = "selector.matchExpressions: the operator is In, NotIn, Exists or DoesNotExist; In and"
            + " NotIn need values, Exists and DoesNotExist take none";
    public static final String SELECTOR_EXPRESSIONS = HAS_EXPRESSIONS + "self.selector.matchExpressions.all(e, size(e.key) <= 317 && e.key.matches('"
            + LABEL_KEY + "') && (!has(e.values) || e.values.all(v, v.matches('" + LABEL_VALUE + "'))))";
    public static final String SELECTOR_EXPRESSIONS_MESSAGE = "selector.matchExpressions keys must be label keys (an optional DNS subdomain prefix and"
            + " '/', then at most 63 letters, digits, '-', '_' or '.') and their values label values";

    /** The deprecated nodeSelector of a NodeUpgrade or DrainReport: a map of labels. */
    public static final String NODE_SELECTOR_KEYS = "!has(self.nodeSelector) || self.nodeSelector.all(k, size(k) <= 317 && k.matches('" + LABEL_KEY + "'))";
    public static final String NODE_SELECTOR_KEYS_MESSAGE = "nodeSelector keys must be label keys: an optional DNS subdomain prefix and '/', then at most 63 "
            + "letters, digits, '-', '_' or '.'";
    public static final String NODE_SELECTOR_VALUES = "!has(self.nodeSelector) || self.nodeSelector.all(k, self.nodeSelector[k].matches('" + LABEL_VALUE + "'))";
    public static final String NODE_SELECTOR_VALUES_MESSAGE = "nodeSelector values must be label values: at most 63 letters, digits, '-', '_' or '.', starting "
            + "and ending with a letter or digit";
    public static final String ONE_NODE_SELECTOR = "!has(self.selector) || !has(self.nodeSelector) || size(self.nodeSelector) == 0";
    public static final String ONE_NODE_SELECTOR_MESSAGE = "set spec.selector or the deprecated spec.nodeSelector, not both: move the nodeSelector's labels"
            + " into selector.matchLabels";

    /**
     * The deprecated podSelector of a spec.drain: a string in kubectl's syntax, which CEL cannot parse (the drain refuses one
     * it cannot, before cordoning anything). An empty one selects what no selector does, so it may stand beside a selector.
     */
    public static final String ONE_POD_SELECTOR = "!has(self.selector) || !has(self.podSelector) || size(self.podSelector) == 0";
    public static final String ONE_POD_SELECTOR_MESSAGE = "set spec.drain.selector or the deprecated spec.drain.podSelector, not both: write the"
            + " podSelector's requirements into selector (a=b into matchLabels, a!=b as {key: a, operator: NotIn, values: [b]}) and remove it";

    private LabelSelectorRules() {
    }
}
