package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Which nodes spec.selector (a metav1.LabelSelector) and the deprecated spec.nodeSelector select, with Kubernetes'
 * semantics (apimachinery labels.Requirement.Matches). Shape: a kubeadm (CKS) cluster of one control-plane node with
 * kubeadm's role label and workers with and without a pool label. Actor: a person writing the selector.
 */
class NodeSelectionTest {
    private static final String CONTROL_PLANE = "node-role.kubernetes.io/control-plane";
    private static final Node CONTROL = node("control-1").controlPlane().build();
    private static final Node BLUE = node("worker-blue").label("pool", "blue").build();
    private static final Node GREEN = node("worker-green").label("pool", "green").build();
    private static final Node BARE = node("worker-bare").build();
    private static final List<Node> CLUSTER = List.of(CONTROL, BLUE, GREEN, BARE);

    private static List<String> selected(NodeSelection selection) {
        return CLUSTER.stream().filter(selection::selects).map(n -> n.getMetadata().getName()).toList();
    }

    private static NodeSelection expression(String key, String operator, String... values) {
        return NodeSelection.of(new LabelSelectorBuilder().addNewMatchExpression().withKey(key).withOperator(operator).withValues(values)
                .endMatchExpression().build(), null);
    }

    @Test
    void workersOnlyIsDoesNotExistOnKubeadmsControlPlaneLabel() {
        NodeSelection workers = expression(CONTROL_PLANE, "DoesNotExist");

        assertThat(selected(workers)).containsExactly("worker-blue", "worker-green", "worker-bare");
        assertThat(workers).hasToString("!" + CONTROL_PLANE);
    }

    @Test
    void eachOperatorMatchesAsKubernetesDoes() {
        assertThat(selected(expression("pool", "In", "blue", "red"))).containsExactly("worker-blue");
        assertThat(selected(expression("pool", "NotIn", "blue"))).as("a node without the key is not in the set")
                .containsExactly("control-1", "worker-green", "worker-bare");
        assertThat(selected(expression("pool", "Exists"))).containsExactly("worker-blue", "worker-green");
        assertThat(selected(expression(CONTROL_PLANE, "Exists"))).as("kubeadm's label has an empty value").containsExactly("control-1");
    }

    @Test
    void matchLabelsAndEveryExpressionMustAllHold() {
        LabelSelector selector = new LabelSelectorBuilder().withMatchLabels(Map.of("pool", "blue"))
                .addNewMatchExpression().withKey(CONTROL_PLANE).withOperator("DoesNotExist").endMatchExpression()
                .addNewMatchExpression().withKey("pool").withOperator("NotIn").withValues("green").endMatchExpression().build();

        NodeSelection selection = NodeSelection.of(selector, null);

        assertThat(selected(selection)).containsExactly("worker-blue");
        assertThat(selection).hasToString("pool=blue,!" + CONTROL_PLANE + ",pool notin (green)");
    }

    @Test
    void noSelectorAndAnEmptyOneSelectEveryNode() {
        assertThat(selected(NodeSelection.of(null, null))).hasSize(4);
        assertThat(selected(NodeSelection.of(new LabelSelector(), Map.of()))).hasSize(4);
        assertThat(NodeSelection.everything().selectsEverything()).isTrue();
        assertThat(NodeSelection.everything()).hasToString("(empty: every node)");
    }

    @Test
    void theDeprecatedNodeSelectorSelectsAsMatchLabels() {
        assertThat(selected(NodeSelection.of(null, Map.of("pool", "green")))).containsExactly("worker-green");
        assertThat(selected(NodeSelection.of(null, Map.of("pool", "green"))))
                .isEqualTo(selected(NodeSelection.matchLabels(Map.of("pool", "green"))));
    }

    /** Admission refuses both at once; an object that has both anyway selects only nodes both allow. */
    @Test
    void bothFieldsTogetherSelectOnlyWhatBothAllow() {
        NodeSelection workers = NodeSelection.of(new LabelSelectorBuilder().addNewMatchExpression().withKey(CONTROL_PLANE)
                .withOperator("DoesNotExist").endMatchExpression().build(), Map.of("pool", "blue"));
        NodeSelection contradicting = NodeSelection.of(new LabelSelectorBuilder().withMatchLabels(Map.of("pool", "blue")).build(),
                Map.of("pool", "green"));

        assertThat(selected(workers)).containsExactly("worker-blue");
        assertThat(selected(contradicting)).isEmpty();
    }

    @Test
    void anUnknownOperatorSelectsNothing() {
        assertThat(selected(expression("pool", "Contains", "blue"))).isEmpty();
    }

    @Test
    void theDeprecationNamesTheObjectAndSpellsOutTheMove() {
        assertThat(NodeSelection.deprecation(Map.of("pool", "blue"), "NodeUpgrade nu-1")).get().asString()
                .startsWith("NodeUpgrade nu-1 selects its nodes with spec.nodeSelector, which is deprecated")
                .contains("Write spec.selector: {matchLabels: {pool: blue}} instead and remove spec.nodeSelector");
        assertThat(NodeSelection.deprecation(Map.of(), "NodeUpgrade nu-1")).as("an empty map selects what no selector does").isEmpty();
        assertThat(NodeSelection.deprecation(null, "NodeUpgrade nu-1")).isEmpty();
    }
}
