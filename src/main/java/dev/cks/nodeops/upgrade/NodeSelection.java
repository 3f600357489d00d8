package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.drain.PodSelector;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes a NodeUpgrade (or a DrainReport) selects: its spec.selector, a metav1.LabelSelector, or the label map
 * of the deprecated spec.nodeSelector (the same as matchLabels). Pure.
 *
 * Kubernetes' semantics (apimachinery {@code metav1.LabelSelectorAsSelector} and {@code labels.Requirement.Matches}):
 * matchLabels and every matchExpression must all hold; In needs the key with one of the values, NotIn and
 * DoesNotExist hold for a node without the key, Exists needs the key. Without a selector, or with an empty one, every
 * node is selected (as an absent namespaceSelector selects every namespace). The requirements are matched by
 * {@link PodSelector}, the one label matcher of the operator (it matches PodDisruptionBudgets' selectors the same way).
 */
public final class NodeSelection {
    /** The reason of the Warning event a NodeUpgrade or DrainReport records while it selects with the deprecated spec.nodeSelector. */
    public static final String DEPRECATED_NODE_SELECTOR = "DeprecatedNodeSelector";

    private final LabelSelector selector;
    private final PodSelector matcher;

    private NodeSelection(LabelSelector selector) {
        this.selector = selector;
        this.matcher = PodSelector.of(selector);
    }

    /**
     * From a spec's two fields. The API server refuses both set at once; were both set anyway (an object stored before
     * that rule), both must hold: a node left out by either is never touched.
     */
    public static NodeSelection of(LabelSelector selector, Map<String, String> deprecatedNodeSelector) {
        LabelSelector combined = new LabelSelector(new ArrayList<>(), new LinkedHashMap<>());
        if (selector != null) {
            if (selector.getMatchLabels() != null) {
                combined.getMatchLabels().putAll(selector.getMatchLabels());
            }
            if (selector.getMatchExpressions() != null) {
                combined.getMatchExpressions().addAll(selector.getMatchExpressions());
            }
        }
        if (deprecatedNodeSelector != null) {
            deprecatedNodeSelector.forEach((key, value) -> {
                String other = combined.getMatchLabels().putIfAbsent(key, value);
                if (other != null && !other.equals(value)) {
                    // Two different values for one key: no node has both, as Kubernetes would match the two requirements.
                    combined.getMatchExpressions().add(new LabelSelectorRequirement(key, "In", List.of(value)));
                }
            });
        }
        return new NodeSelection(combined);
    }

    /**
     * What to tell the owner of an object that still selects with the deprecated spec.nodeSelector (an empty one selects
     * what no selector does, so it is no reason to write): the move, spelled out with its labels.
     */
    public static Optional<String> deprecation(Map<String, String> deprecatedNodeSelector, String object) {
        if (deprecatedNodeSelector == null || deprecatedNodeSelector.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(object + " selects its nodes with spec.nodeSelector, which is deprecated and will be removed in a later release."
                + " Write spec.selector: " + PodSelector.flowYaml(new LabelSelector(null, deprecatedNodeSelector))
                + " instead and remove spec.nodeSelector (both in one edit; it selects the same nodes).");
    }

    /** The nodes with all these labels; empty selects every node. */
    public static NodeSelection matchLabels(Map<String, String> labels) {
        return of(new LabelSelector(null, labels), null);
    }

    /** Every node. */
    public static NodeSelection everything() {
        return of(null, null);
    }

    public boolean selects(Node node) {
        return matcher.matches(node.getMetadata().getLabels());
    }

    public boolean selectsEverything() {
        return selector.getMatchLabels().isEmpty() && selector.getMatchExpressions().isEmpty();
    }

    /** As kubectl writes a selector ({@code -l}), e.g. {@code pool=a,zone in (x,y),!node-role.kubernetes.io/control-plane}. */
    @Override
    public String toString() {
        return selectsEverything() ? "(empty: every node)" : matcher.toString();
    }
}
