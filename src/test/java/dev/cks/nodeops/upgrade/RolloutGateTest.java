package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.operation.MaintenanceWindow;
import dev.cks.nodeops.operation.MaintenanceWindow.Day;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestWindows;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;

/** The rollout's gate as a pure decision: plain status, plain Nodes and an instant, no cluster. */
class RolloutGateTest {
    private static final String OWNER = "NodeUpgrade/to-1-35";
    /** A Tuesday. */
    private static final Instant NOW = Instant.parse("2026-12-01T03:00:00Z");

    private final NodeUpgradeSpec spec = new NodeUpgradeSpec();
    private final NodeUpgradeStatus status = new NodeUpgradeStatus();
    private final List<Node> cluster = new ArrayList<>();

    RolloutGateTest() {
        status.setNodes(new ArrayList<>());
        status.setDeadline(Timestamps.format(NOW.plusSeconds(3600)));
    }

    private UpgradeNodeStatus worker(String name, Phase phase) {
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName(name);
        node.setRole(NodeRole.Worker);
        node.setPhase(phase);
        status.getNodes().add(node);
        cluster.add(TestNodes.node(name).build());
        return node;
    }

    /** Workers w-1, w-2, ... in these phases, all Ready in the cluster. */
    private List<UpgradeNodeStatus> workers(Phase... phases) {
        for (int i = 0; i < phases.length; i++) {
            worker("w-" + (i + 1), phases[i]);
        }
        return status.getNodes();
    }

    private RolloutGate.Round round() {
        return RolloutGate.round(spec, status, RolloutGate.windows(spec, NOW), cluster, OWNER, NOW);
    }

    private static List<String> advancing(RolloutGate.Round round) {
        return round.turns().stream().filter(RolloutGate.Advance.class::isInstance).map(turn -> turn.node().getName()).toList();
    }

    /** Mondays 01:00-02:00 UTC: closed at {@link #NOW}. */
    private static MaintenanceWindow closedWindow(MaintenanceWindow.OnClose onClose) {
        MaintenanceWindow window = TestWindows.window("UTC", "01:00", "02:00", Day.Mon);
        window.setOnClose(onClose);
        return window;
    }

    @Test
    void workersStartUpToMaxUnavailableAndTheRestWaitForRoomSayingWhy() {
        workers(Phase.Pending, Phase.Pending, Phase.Pending);
        spec.setMaxUnavailable(new IntOrString(2));
        assertThat(advancing(round())).containsExactly("w-1", "w-2");

        status.getNodes().get(0).setPhase(Phase.Soaking);
        status.getNodes().get(1).setPhase(Phase.Upgrading);
        status.getNodes().get(1).setJobName("upgrade-w-2");
        RolloutGate.Round full = round();
        assertThat(advancing(full)).as("a soaking node keeps its place under maxUnavailable").containsExactly("w-1", "w-2");
        assertThat(full.idle()).isInstanceOfSatisfying(RolloutGate.NoRoom.class,
                noRoom -> assertThat(noRoom.limit()).contains("maxUnavailable 2 allows 2 of 3").contains("w-1, w-2"));
    }

    @Test
    void pausedHoldsNodesAtASafeBoundaryButNeverInterruptsARunningUpgradeJob() {
        worker("w-1", Phase.Draining);
        UpgradeNodeStatus running = worker("w-2", Phase.Upgrading);
        running.setJobName("upgrade-w-2");
        worker("w-3", Phase.Upgrading);
        worker("w-4", Phase.Pending);
        spec.setMaxUnavailable(new IntOrString(4));
        spec.setPaused(true);

        RolloutGate.Round round = round();
        assertThat(advancing(round)).as("w-3 has neither Job nor ISO yet: a safe boundary").containsExactly("w-2");
        assertThat(RolloutGate.windows(spec, NOW).resume(status.getNodes())).as("paused: the time held is not given back").isFalse();

        status.getNodes().remove(running);
        assertThat(round().turns()).isEmpty();
        assertThat(round().idle()).isInstanceOfSatisfying(RolloutGate.Held.class,
                held -> assertThat(held.hold().reason()).isEqualTo(WorkGate.PAUSED));
    }

    @Test
    void aClosedWindowLetsANodeInProgressFinishUnlessItSaysStopAtSafeBoundary() {
        workers(Phase.Draining, Phase.Pending);
        spec.setMaxUnavailable(new IntOrString(2));
        spec.setWindow(closedWindow(MaintenanceWindow.OnClose.FinishInProgress));
        RolloutGate.Windows windows = RolloutGate.windows(spec, NOW);
        assertThat(advancing(round())).as("nothing new starts outside the window").containsExactly("w-1");
        assertThat(windows.resume(status.getNodes())).as("work goes on for w-1: the time held is given back").isTrue();

        spec.setWindow(closedWindow(MaintenanceWindow.OnClose.StopAtSafeBoundary));
        assertThat(round().turns()).isEmpty();
        assertThat(round().idle()).isInstanceOfSatisfying(RolloutGate.Held.class, held -> {
            assertThat(held.hold().reason()).isEqualTo(WorkGate.OUTSIDE_WINDOW);
            assertThat(held.hold().until()).isEqualTo(Instant.parse("2026-12-07T01:00:00Z"));
        });

        status.getNodes().get(0).setPhase(Phase.Succeeded);
        assertThat(RolloutGate.windows(spec, NOW).resume(status.getNodes())).as("nothing in progress and no new work: still held").isFalse();
    }

    @Test
    void pastTheDeadlineANodeBeforeItsJobIsGivenUpAndOneUnderKubeadmFinishes() {
        UpgradeNodeStatus draining = workers(Phase.Draining, Phase.WaitingReady, Phase.Pending).get(0);
        spec.setMaxUnavailable(new IntOrString(3));
        status.setDeadline(Timestamps.format(NOW.minusSeconds(1)));

        RolloutGate.Round round = round();
        assertThat(round.turns()).hasSize(2);
        assertThat(round.turns().get(0)).isInstanceOfSatisfying(RolloutGate.GiveUp.class, giveUp -> {
            assertThat(giveUp.node()).isSameAs(draining);
            assertThat(giveUp.error()).isEqualTo("The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline()
                    + ") passed while node w-1 was Draining.");
        });
        assertThat(advancing(round)).as("no new node starts past the deadline").containsExactly("w-2");

        status.getNodes().get(0).setPhase(Phase.Succeeded);
        status.getNodes().get(1).setPhase(Phase.Succeeded);
        assertThat(round().idle()).isInstanceOfSatisfying(RolloutGate.StartTooLate.class, late -> {
            assertThat(late.node().getName()).isEqualTo("w-3");
            assertThat(late.error()).contains("passed before node w-3 could start");
        });
    }

    @Test
    void afterAFailedNodeNoFurtherNodeStartsAndTheUpgradeFailsOnceTheOthersAreDone() {
        UpgradeNodeStatus failed = workers(Phase.Failed, Phase.Draining, Phase.Pending).get(0);
        spec.setMaxUnavailable(new IntOrString(3));
        assertThat(advancing(round())).as("w-1 is given back first, w-2 goes on, w-3 waits").containsExactly("w-1", "w-2");

        failed.setCompletedAt(Timestamps.format(NOW));
        status.getNodes().get(1).setPhase(Phase.Succeeded);
        assertThat(round().turns()).isEmpty();
        assertThat(round().idle()).isInstanceOfSatisfying(RolloutGate.FinishFailed.class,
                finish -> assertThat(finish.failed()).containsExactly(failed));
    }

    @Test
    void withEveryNodeUpgradedOrSkippedTheUpgradeSucceeds() {
        workers(Phase.Succeeded, Phase.Skipped);
        assertThat(round().turns()).isEmpty();
        assertThat(round().idle()).isInstanceOf(RolloutGate.FinishSucceeded.class);
    }
}
