package dev.cks.nodeops.drain;

import java.util.Optional;

import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * Which pods a drain evicts (and a DrainReport assumes its drains evict): spec.drain.selector, a metav1.LabelSelector, or
 * the kubectl-style string of the deprecated spec.drain.podSelector. Unset, empty or blank, every pod (the other filters
 * still apply), as kubectl drain without --pod-selector. Matched with Kubernetes' semantics by {@link PodSelector}. Pure.
 */
public final class PodSelection {
    /** The reason of the Warning event a NodeUpgrade, ScaleDown or DrainReport records while its drain selects with spec.drain.podSelector. */
    public static final String DEPRECATED_POD_SELECTOR = "DeprecatedPodSelector";

    private PodSelection() {
    }

    /**
     * From spec.drain's two fields. The API server refuses both set at once; were both set anyway (options built in code),
     * both must hold: a pod left out by either stays on its node.
     *
     * @throws PodSelector.InvalidSelector when the deprecated podSelector cannot be parsed
     */
    public static PodSelector of(LabelSelector selector, String deprecatedPodSelector) {
        PodSelector chosen = selector == null ? PodSelector.everything() : PodSelector.of(selector);
        return chosen.and(PodSelector.parse(deprecatedPodSelector));
    }

    /**
     * What to tell the owner of an object whose drain still selects with the deprecated spec.drain.podSelector (a blank one
     * selects what no selector does, so it is no reason to write): the same requirements, written as spec.drain.selector.
     *
     * @param drainFixed spec.drain cannot change once the object exists (a NodeUpgrade's, a ScaleDown's): the move is for the next one
     */
    public static Optional<String> deprecation(String deprecatedPodSelector, String object, boolean drainFixed) {
        if (deprecatedPodSelector == null || deprecatedPodSelector.isBlank()) {
            return Optional.empty();
        }
        String move;
        try {
            move = "Write spec.drain.selector: " + PodSelector.flowYaml(PodSelector.parse(deprecatedPodSelector).toLabelSelector())
                    + " instead and remove spec.drain.podSelector (it selects the same pods)";
        } catch (PodSelector.InvalidSelector unparsable) {
            move = "Write its requirements as spec.drain.selector (matchLabels, matchExpressions) instead and remove spec.drain.podSelector";
        }
        return Optional.of(object + " selects the pods to drain with spec.drain.podSelector '" + deprecatedPodSelector.strip()
                + "', which is deprecated and will be removed in a later release. " + move
                + (drainFixed ? "; spec.drain cannot change once created, so do it in the next one." : ", in one edit."));
    }
}
