package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.operation.FinishEstimate;
import dev.cks.nodeops.testing.TestSettings;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.IntOrString;

/** How a NodeUpgrade's status reads as a plan for the estimate: stages, lanes, what is measured, what is left. */
class UpgradeEstimateTest {
    private static final Instant NOON = Instant.parse("2026-11-30T12:00:00Z");
    private final ManualTime clock = new ManualTime(NOON);
    private final TestSettings settings = new TestSettings();

    private static UpgradeNodeStatus node(String name, NodeRole role, Phase phase, Instant started, Instant completed) {
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName(name);
        node.setRole(role);
        node.setPhase(phase);
        node.setStartedAt(Timestamps.format(started));
        node.setCompletedAt(Timestamps.format(completed));
        return node;
    }

    @Test
    void theControlPlaneGoesAloneFirstThenTheWorkersAsManyAtOnceAsMaxUnavailableAllowsEachWithItsSoak() {
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setMaxUnavailable(new IntOrString("50%"));
        spec.setSoakSeconds(60);
        List<UpgradeNodeStatus> nodes = List.of(node("cp-1", NodeRole.ControlPlane, Phase.Pending, null, null),
                node("w-1", NodeRole.Worker, Phase.Pending, null, null), node("w-2", NodeRole.Worker, Phase.Pending, null, null),
                node("w-3", NodeRole.Worker, Phase.Pending, null, null), node("w-4", NodeRole.Worker, Phase.Pending, null, null),
                node("w-5", NodeRole.Worker, Phase.Skipped, null, null));

        FinishEstimate.Plan plan = UpgradeEstimate.plan(spec, nodes, settings.estimate());
        FinishEstimate.Estimate estimate = UpgradeEstimate.of(spec, nodes, settings.estimate(), clock.instant()).orElseThrow();

        assertThat(plan.stages()).extracting(FinishEstimate.Stage::lanes).as("50% of 5 selected workers: 2 at once").containsExactly(1, 2);
        assertThat(plan.stages().get(1).work()).as("the skipped worker is not work left").hasSize(4);
        assertThat(estimate.finish()).as("16 min for the control plane, then two waves of 7 min").isEqualTo(NOON.plus(Duration.ofMinutes(16 + 2 * 7)));
    }

    @Test
    void onlyNodesThatSucceededAreMeasuredAndAFailedNodeIsNoLongerWorkLeft() {
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        clock.advance(Duration.ofMinutes(10));
        List<UpgradeNodeStatus> nodes = List.of(
                node("w-1", NodeRole.Worker, Phase.Succeeded, NOON, NOON.plus(Duration.ofMinutes(4))),
                node("w-2", NodeRole.Worker, Phase.Failed, NOON.plus(Duration.ofMinutes(4)), null),
                node("w-3", NodeRole.Worker, Phase.Draining, NOON.plus(Duration.ofMinutes(9)), null),
                node("w-4", NodeRole.Worker, Phase.Pending, null, null));

        FinishEstimate.Estimate estimate = UpgradeEstimate.of(spec, nodes, settings.estimate(), clock.instant()).orElseThrow();

        assertThat(estimate.basis()).isEqualTo("2 left; worker 4 min a node, measured: the mean of 1 finished here");
        assertThat(estimate.finish()).as("3 min left of w-3, then w-4").isEqualTo(clock.instant().plus(Duration.ofMinutes(3 + 4)));
    }
}
