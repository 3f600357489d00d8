package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;

class UpgradePlanTest {
    private static final String T0 = "2026-01-01T00:00:00Z";
    private static final String T1 = "2026-01-01T00:05:00Z";

    @Test
    void ordersFirstControlPlaneThenOtherControlPlanesThenWorkersWithApplyOnlyOnTheFirst() {
        List<Node> nodes = List.of(
                node("c-node-b", false, T0, "v1.32.7", true),
                node("c-control-z", true, T1, "v1.32.7", true),
                node("c-node-a", false, T1, "v1.32.7", true),
                node("c-control-y", true, T0, "v1.32.7", true));

        List<UpgradeNodeStatus> plan = UpgradePlan.plan(nodes, NodeSelection.everything(), "v1.33.4");

        assertThat(plan).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getRole, UpgradeNodeStatus::getAction, UpgradeNodeStatus::getPhase)
                .containsExactly(
                        tuple("c-control-y", NodeRole.ControlPlane, Action.Apply, Phase.Pending),
                        tuple("c-control-z", NodeRole.ControlPlane, Action.Node, Phase.Pending),
                        tuple("c-node-b", NodeRole.Worker, Action.Node, Phase.Pending),
                        tuple("c-node-a", NodeRole.Worker, Action.Node, Phase.Pending));
        assertThat(plan).allMatch(n -> "v1.32.7".equals(n.getFromVersion()));
    }

    @Test
    void firstControlPlaneIsTheOldestThenByNameWhenCreatedTogether() {
        List<Node> nodes = List.of(node("c-control-b", true, T0, "v1.32.7", true), node("c-control-a", true, T0, "v1.32.7", true));

        assertThat(UpgradePlan.plan(nodes, NodeSelection.everything(), "v1.33.4")).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getAction)
                .containsExactly(tuple("c-control-a", Action.Apply), tuple("c-control-b", Action.Node));
    }

    @Test
    void aNodeReadyAtTheTargetIsSkippedAndApplyNeverRunsAgainWhenTheFirstControlPlaneIsDone() {
        List<Node> nodes = List.of(
                node("c-control-a", true, T0, "v1.33.4", true),
                node("c-control-b", true, T1, "v1.32.7", true),
                node("c-node-a", false, T0, "v1.33.4+vendor.1", true));

        List<UpgradeNodeStatus> plan = UpgradePlan.plan(nodes, NodeSelection.everything(), "1.33.4");

        assertThat(plan).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getAction, UpgradeNodeStatus::getPhase)
                .containsExactly(tuple("c-control-a", Action.Skip, Phase.Skipped), tuple("c-control-b", Action.Node, Phase.Pending),
                        tuple("c-node-a", Action.Skip, Phase.Skipped));
        assertThat(plan).noneMatch(n -> n.getAction() == Action.Apply);
    }

    @Test
    void versionMatchIsExactSoAPatchThatMerelyStartsWithTheTargetIsUpgraded() {
        List<UpgradeNodeStatus> plan = UpgradePlan.plan(List.of(node("c-node-a", false, T0, "v1.28.10", true)), NodeSelection.everything(), "1.28.1");

        assertThat(plan.get(0).getAction()).isEqualTo(Action.Node);
    }

    @Test
    void aNodeAtTheTargetButNotReadyIsUpgradedAgain() {
        List<UpgradeNodeStatus> plan = UpgradePlan.plan(List.of(node("c-node-a", false, T0, "v1.33.4", false)), NodeSelection.everything(), "v1.33.4");

        assertThat(plan.get(0).getAction()).isEqualTo(Action.Node);
        assertThat(plan.get(0).getPhase()).isEqualTo(Phase.Pending);
    }

    @Test
    void nodeSelectorNarrowsTheSetAndTheFirstSelectedControlPlaneApplies() {
        Node other = node("c-control-a", true, T0, "v1.32.7", true);
        Node selectedControl = node("c-control-b", true, T1, "v1.32.7", true);
        selectedControl.getMetadata().getLabels().put("pool", "x");
        Node worker = node("c-node-a", false, T0, "v1.32.7", true);
        worker.getMetadata().getLabels().put("pool", "x");

        List<UpgradeNodeStatus> plan = UpgradePlan.plan(List.of(other, selectedControl, worker), NodeSelection.matchLabels(Map.of("pool", "x")), "v1.33.4");

        assertThat(plan).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getAction)
                .containsExactly(tuple("c-control-b", Action.Apply), tuple("c-node-a", Action.Node));
    }

    @Test
    void aControlPlaneNodeOutsideTheSelectionAlreadyAtTheTargetMeansApplyRanAlready() {
        Node done = node("c-control-a", true, T0, "v1.33.4", true);
        Node selectedControl = node("c-control-b", true, T1, "v1.32.7", true);
        selectedControl.getMetadata().getLabels().put("pool", "x");

        List<UpgradeNodeStatus> plan = UpgradePlan.plan(List.of(done, selectedControl), NodeSelection.matchLabels(Map.of("pool", "x")), "v1.33.4");

        assertThat(plan).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getAction).containsExactly(tuple("c-control-b", Action.Node));
    }
}
