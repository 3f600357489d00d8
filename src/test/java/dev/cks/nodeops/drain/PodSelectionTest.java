package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;

/**
 * Which pods a drain evicts: spec.drain.selector (a metav1.LabelSelector) or the deprecated kubectl-style
 * spec.drain.podSelector, with Kubernetes' semantics (apimachinery labels.Requirement.Matches). Shape: one node's pods of a
 * shop, web pods of two tiers, a batch pod and an unlabelled one. Actor: a person writing spec.drain of a NodeUpgrade,
 * ScaleDown or DrainReport.
 */
class PodSelectionTest {
    private static final Map<String, Map<String, String>> PODS = Map.of(
            "web-front", Map.of("app", "web", "tier", "front"),
            "web-cache", Map.of("app", "web", "tier", "cache"),
            "batch", Map.of("app", "batch", "legacy", "true"),
            "bare", Map.of());

    private static List<String> selected(PodSelector selector) {
        return PODS.entrySet().stream().filter(pod -> selector.matches(pod.getValue())).map(Map.Entry::getKey).sorted().toList();
    }

    private static LabelSelector expressions(String... keyOperatorValues) {
        LabelSelectorBuilder builder = new LabelSelectorBuilder();
        for (int i = 0; i < keyOperatorValues.length; i += 3) {
            List<String> values = keyOperatorValues[i + 2].isEmpty() ? List.of() : List.of(keyOperatorValues[i + 2].split(","));
            builder.addNewMatchExpression().withKey(keyOperatorValues[i]).withOperator(keyOperatorValues[i + 1]).withValues(values)
                    .endMatchExpression();
        }
        return builder.build();
    }

    @Test
    void matchExpressionsSelectAsKubernetesDoes() {
        assertThat(selected(PodSelection.of(expressions("app", "In", "web,api"), ""))).containsExactly("web-cache", "web-front");
        assertThat(selected(PodSelection.of(expressions("tier", "NotIn", "cache"), ""))).as("a pod without the key is not in the set")
                .containsExactly("bare", "batch", "web-front");
        assertThat(selected(PodSelection.of(expressions("legacy", "Exists", ""), ""))).containsExactly("batch");
        assertThat(selected(PodSelection.of(expressions("app", "In", "web", "tier", "DoesNotExist", ""), ""))).as("every requirement holds")
                .isEmpty();
        assertThat(selected(PodSelection.of(new LabelSelectorBuilder().addToMatchLabels("app", "web").build(), null)))
                .containsExactly("web-cache", "web-front");
    }

    @Test
    void noSelectorAnEmptyOneAndABlankPodSelectorDrainEveryPod() {
        assertThat(selected(PodSelection.of(null, ""))).hasSize(4);
        assertThat(selected(PodSelection.of(null, null))).hasSize(4);
        assertThat(selected(PodSelection.of(new LabelSelector(), " "))).hasSize(4);
    }

    @Test
    void theDeprecatedPodSelectorStillSelectsAndItsMoveSelectsTheSamePods() {
        for (String old : List.of("app=web,tier!=cache", "app in (web,batch),!legacy", "legacy", "tier notin (front)", "app==batch")) {
            PodSelector deprecated = PodSelection.of(null, old);
            assertThat(selected(PodSelection.of(deprecated.toLabelSelector(), ""))).as(old).isEqualTo(selected(deprecated));
        }
        assertThat(selected(PodSelection.of(null, "app=web,tier!=cache"))).containsExactly("web-front");
        assertThatThrownBy(() -> PodSelection.of(null, "app in (web")).isInstanceOf(PodSelector.InvalidSelector.class);
    }

    /** Admission refuses both at once; options that have both anyway (built in code) drain only pods both select. */
    @Test
    void bothTogetherSelectOnlyWhatBothAllow() {
        assertThat(selected(PodSelection.of(expressions("app", "In", "web"), "tier=cache"))).containsExactly("web-cache");
    }

    @Test
    void theOptionsSelectWithTheirSelectorAndNameItInTheSkipReason() {
        DrainOptions options = new DrainOptions();
        options.setSelector(expressions("tier", "NotIn", "cache"));

        assertThat(selected(options.podSelection())).containsExactly("bare", "batch", "web-front");
        assertThat(PodFilters.selector(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withNamespace("shop")
                .withName("web-cache-1").withLabels(PODS.get("web-cache")).endMetadata().build(), options.podSelection()).reason())
                .isEqualTo("does not match the drain's selector 'tier notin (cache)': shop/web-cache-1");
    }

    @Test
    void theDeprecationNamesTheObjectAndSpellsOutTheMove() {
        assertThat(PodSelection.deprecation("app=web,tier!=cache", "ScaleDown sd-1", true)).get().asString()
                .startsWith("ScaleDown sd-1 selects the pods to drain with spec.drain.podSelector 'app=web,tier!=cache', which is deprecated")
                .contains("Write spec.drain.selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: NotIn, values: [cache]}]}"
                        + " instead and remove spec.drain.podSelector (it selects the same pods)")
                .endsWith("spec.drain cannot change once created, so do it in the next one.");
        assertThat(PodSelection.deprecation("legacy", "DrainReport nodes", false)).get().asString()
                .contains("Write spec.drain.selector: {matchExpressions: [{key: legacy, operator: Exists}]} instead").endsWith(", in one edit.");
        assertThat(PodSelection.deprecation("app in (web", "DrainReport nodes", false)).as("unparsable: the move without its requirements")
                .get().asString().contains("Write its requirements as spec.drain.selector (matchLabels, matchExpressions)");
        assertThat(PodSelection.deprecation(" ", "ScaleDown sd-1", true)).as("a blank one selects what no selector does").isEmpty();
        assertThat(PodSelection.deprecation(null, "ScaleDown sd-1", true)).isEmpty();
    }
}
