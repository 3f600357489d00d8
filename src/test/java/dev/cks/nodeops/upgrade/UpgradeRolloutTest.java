package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;

class UpgradeRolloutTest {
    private static final String OWNER = "NodeUpgrade/to-1-35";
    private final List<UpgradeNodeStatus> plan = new ArrayList<>();
    private final List<Node> cluster = new ArrayList<>();

    private UpgradeNodeStatus add(String name, NodeRole role, Phase phase) {
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName(name);
        node.setRole(role);
        node.setPhase(phase);
        plan.add(node);
        TestNodes.Builder builder = TestNodes.node(name);
        cluster.add(role == NodeRole.ControlPlane ? builder.controlPlane().build() : builder.build());
        return node;
    }

    private List<String> toStart(IntOrString maxUnavailable) {
        return UpgradeRollout.select(plan, cluster, maxUnavailable, OWNER, true).toStart().stream().map(UpgradeNodeStatus::getName).toList();
    }

    @Test
    void controlPlaneNodesGoOneAtATimeTheFirstAloneAndBeforeAnyWorker() {
        add("cp-1", NodeRole.ControlPlane, Phase.Pending);
        add("cp-2", NodeRole.ControlPlane, Phase.Pending);
        add("w-1", NodeRole.Worker, Phase.Pending);
        assertThat(toStart(new IntOrString(5))).containsExactly("cp-1");

        plan.get(0).setPhase(Phase.Draining);
        assertThat(toStart(new IntOrString(5))).isEmpty();
        plan.get(0).setPhase(Phase.Succeeded);
        assertThat(toStart(new IntOrString(5))).containsExactly("cp-2");
        plan.get(1).setPhase(Phase.Soaking);
        assertThat(toStart(new IntOrString(5))).as("a soaking control-plane node still holds the workers back").isEmpty();
    }

    @Test
    void workersGoUpToMaxUnavailableCountingTheirOwnInProgressAndOthersUnavailable() {
        add("w-1", NodeRole.Worker, Phase.Upgrading);
        add("w-2", NodeRole.Worker, Phase.Pending);
        add("w-3", NodeRole.Worker, Phase.Pending);
        add("w-4", NodeRole.Worker, Phase.Pending);
        assertThat(toStart(new IntOrString(3))).containsExactly("w-2", "w-3");

        cluster.set(3, TestNodes.node("w-4").ready(false).build());
        assertThat(toStart(new IntOrString(3))).as("w-4 is NotReady: it counts already, so starting it costs nothing")
                .containsExactly("w-2", "w-4");
    }

    @Test
    void aNodeCordonedBySomeoneElseCountsOneCordonedByThisUpgradeDoesNot() {
        add("w-1", NodeRole.Worker, Phase.Succeeded);
        add("w-2", NodeRole.Worker, Phase.Pending);
        add("w-3", NodeRole.Worker, Phase.Pending);
        cluster.set(0, TestNodes.node("w-1").unschedulable().build());
        assertThat(toStart(new IntOrString(2))).containsExactly("w-2");

        cluster.set(0, TestNodes.node("w-1").unschedulable().annotation(NodeAnnotations.CORDONED_BY, OWNER).build());
        assertThat(toStart(new IntOrString(2))).containsExactly("w-2", "w-3");
    }

    @Test
    void aNodeUpgradedAndLeftCordonedAsItWasFoundDoesNotHoldTheOthersBack() {
        UpgradeNodeStatus preCordoned = add("w-1", NodeRole.Worker, Phase.Pending);
        add("w-2", NodeRole.Worker, Phase.Pending);
        cluster.set(0, TestNodes.node("w-1").unschedulable().build());
        assertThat(toStart(new IntOrString(1))).as("the cordoned node costs nothing, the other would be a second").containsExactly("w-1");

        preCordoned.setPhase(Phase.Succeeded);
        preCordoned.setCordonedByUs(false);
        assertThat(toStart(new IntOrString(1))).as("its cordon is the one it had before the upgrade").containsExactly("w-2");

        cluster.set(0, TestNodes.node("w-1").unschedulable().ready(false).build());
        assertThat(toStart(new IntOrString(1))).as("NotReady still counts").isEmpty();
    }

    @Test
    void percentagesAreOfTheSelectedWorkersRoundedDownAndAtLeastOne() {
        assertThat(UpgradeRollout.allowed(new IntOrString("25%"), 10)).isEqualTo(2);
        assertThat(UpgradeRollout.allowed(new IntOrString("10%"), 4)).isEqualTo(1);
        assertThat(UpgradeRollout.allowed(new IntOrString("100%"), 4)).isEqualTo(4);
        assertThat(UpgradeRollout.allowed(new IntOrString(3), 2)).isEqualTo(3);
        assertThat(UpgradeRollout.allowed(null, 7)).isEqualTo(1);
    }

    @Test
    void nothingStartsWhileHeldAndAFailedNodeCountsInProgressUntilGivenBack() {
        UpgradeNodeStatus failed = add("w-1", NodeRole.Worker, Phase.Failed);
        add("w-2", NodeRole.Worker, Phase.Pending);
        assertThat(UpgradeRollout.select(plan, cluster, new IntOrString(2), OWNER, false).toStart()).isEmpty();
        assertThat(UpgradeRollout.select(plan, cluster, new IntOrString(2), OWNER, false).inProgress()).containsExactly(failed);
        failed.setCompletedAt("2026-01-01T00:00:00Z");
        assertThat(UpgradeRollout.select(plan, cluster, new IntOrString(2), OWNER, false).inProgress()).isEmpty();
    }
}
