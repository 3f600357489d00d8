package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;

class PodSelectorTest {
    private static final Map<String, String> WEB = Map.of("app", "web", "tier", "front", "zone", "a");

    @ParameterizedTest(name = "''{0}'' matches app=web,tier=front,zone=a: {1}")
    @CsvSource(delimiter = '|', value = {
            "app=web | true",
            "app==web | true",
            "app=api | false",
            "app!=api | true",
            "app!=web | false",
            "missing!=x | true",
            "zone in (a,b) | true",
            "zone in (b, c) | false",
            "zone notin (b,c) | true",
            "zone notin (a) | false",
            "missing notin (a) | true",
            "tier | true",
            "missing | false",
            "!missing | true",
            "!tier | false",
            "app=web,tier!=cache,zone in (a,b),!legacy | true",
            "app=web, zone in (x,y) | false",
            "' app = web ' | true",
            "example.com/role=web | false",
    })
    void matchesLikeKubectl(String selector, boolean matches) {
        assertThat(PodSelector.parse(selector).matches(WEB)).isEqualTo(matches);
    }

    @Test
    void blankSelectsEveryPodIncludingUnlabelled() {
        assertThat(PodSelector.parse("").matches(null)).isTrue();
        assertThat(PodSelector.parse("  ").matches(java.util.Map.of("any", "label"))).isTrue();
        assertThat(PodSelector.parse(null).matches(WEB)).isTrue();
    }

    @Test
    void parsesEachRequirement() {
        assertThat(PodSelector.parse("a=b,c!=d,e in (x,y),!f,g").requirements()).extracting(PodSelector.Requirement::operator)
                .containsExactly(PodSelector.Operator.EQUALS, PodSelector.Operator.NOT_EQUALS, PodSelector.Operator.IN,
                        PodSelector.Operator.DOES_NOT_EXIST, PodSelector.Operator.EXISTS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a=b,,c=d", "a=b,", "=b", "a=b c", "a in (x", "-a=b", "a=-b-"})
    void invalidSelectorsAreRefusedWithASentenceSayingHowToWriteOne(String selector) {
        assertThatThrownBy(() -> PodSelector.parse(selector)).isInstanceOf(PodSelector.InvalidSelector.class)
                .hasMessageContaining("The podSelector '" + selector + "' is not a valid label selector")
                .hasMessageContaining("e.g. 'app=web");
    }

    @Test
    void budgetSelectorsMatchTheSameWay() {
        PodSelector selector = PodSelector.of(new LabelSelectorBuilder().addToMatchLabels("app", "web")
                .addNewMatchExpression().withKey("zone").withOperator("In").withValues(List.of("a", "b")).endMatchExpression().build());
        assertThat(selector.matches(WEB)).isTrue();
        assertThat(selector.matches(Map.of("app", "web"))).isFalse();
        assertThat(PodSelector.of(null).matches(WEB)).as("a budget without selector covers no pod").isFalse();
        assertThat(PodSelector.of(new LabelSelectorBuilder().build()).matches(WEB)).as("an empty selector covers all").isTrue();
    }

    @Test
    void aLabelSelectorIsWrittenInKubectlSyntax() {
        assertThat(PodSelector.of(new LabelSelectorBuilder().addToMatchLabels("app", "web")
                .addNewMatchExpression().withKey("zone").withOperator("In").withValues(List.of("b", "a")).endMatchExpression()
                .addNewMatchExpression().withKey("legacy").withOperator("DoesNotExist").endMatchExpression().build()))
                .hasToString("app=web,zone in (a,b),!legacy");
        assertThat(PodSelector.of(new LabelSelectorBuilder().addNewMatchExpression().withKey("zone").withOperator("Near").withValues("a")
                .endMatchExpression().build())).as("an operator Kubernetes does not know selects nothing, and says what it was")
                .hasToString("zone Near (a)").satisfies(selector -> assertThat(selector.matches(WEB)).isFalse());
    }

    /** What a deprecation tells users to write must be YAML the API server reads as strings: values YAML would read otherwise are quoted. */
    @Test
    void aKubectlSelectorBecomesALabelSelectorWrittenAsFlowYaml() {
        assertThat(PodSelector.flowYaml(PodSelector.parse("app=web,tier!=cache,zone in (b,a),!legacy,version=1,enabled=true,empty=,app=api")
                .toLabelSelector())).isEqualTo("{matchLabels: {app: web, version: '1', enabled: 'true', empty: ''}, matchExpressions: ["
                        + "{key: tier, operator: NotIn, values: [cache]}, {key: zone, operator: In, values: [a, b]},"
                        + " {key: legacy, operator: DoesNotExist}, {key: app, operator: In, values: [api]}]}");
    }

    @Test
    void twoSelectorsTogetherNeedBoth() {
        PodSelector both = PodSelector.parse("app=web").and(PodSelector.parse("zone in (a)"));
        assertThat(both.matches(WEB)).isTrue();
        assertThat(both.matches(Map.of("app", "web"))).isFalse();
        assertThat(both).hasToString("app=web,zone in (a)");
        assertThat(PodSelector.parse("app=web").and(PodSelector.of(null)).matches(WEB)).as("with one that selects nothing").isFalse();
        assertThat(PodSelector.everything().and(PodSelector.parse(""))).hasToString("");
    }
}
