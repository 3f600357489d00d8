package dev.cks.nodeops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.AuditSettings;
import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.audit.VMMapAuditStatus;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.monitoring.StatusSeries.Sample;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;

class StatusSeriesTest {
    @Test
    void everyOperationWithAPhaseHasOneSeriesForIt() {
        NodeUpgrade failed = upgrade("to-1-35", NodeUpgradeStatus.Phase.Failed);
        ScaleDown rolledBack = scaleDown("remove-two", ScaleDownStatus.Phase.RolledBack);
        NodeUpgrade fresh = upgrade("just-created", null);

        assertThat(StatusSeries.operationPhases(List.of(failed, fresh), List.of(rolledBack))).containsExactlyInAnyOrder(
                new Sample(Map.of("kind", "NodeUpgrade", "name", "to-1-35", "phase", "Failed"), 1),
                new Sample(Map.of("kind", "ScaleDown", "name", "remove-two", "phase", "RolledBack"), 1));
    }

    @Test
    void everyRunningOperationWithAnEstimateHasItsFinishInEpochSeconds() {
        NodeUpgrade running = upgrade("to-1-35", NodeUpgradeStatus.Phase.Running);
        running.getStatus().setEstimatedFinish("2026-11-30T13:00:00Z");
        NodeUpgrade done = upgrade("done", NodeUpgradeStatus.Phase.Succeeded);
        ScaleDown draining = scaleDown("remove-two", ScaleDownStatus.Phase.Draining);
        draining.getStatus().setEstimatedFinish("2026-11-30T12:30:00Z");

        assertThat(StatusSeries.estimatedFinishes(List.of(running, done), List.of(draining))).containsExactlyInAnyOrder(
                new Sample(Map.of("kind", "NodeUpgrade", "name", "to-1-35"), java.time.Instant.parse("2026-11-30T13:00:00Z").getEpochSecond()),
                new Sample(Map.of("kind", "ScaleDown", "name", "remove-two"), java.time.Instant.parse("2026-11-30T12:30:00Z").getEpochSecond()));
    }

    @Test
    void aNodeBeingDrainedIsBlockedOnceBudgetsHeldItsPodsForTenSecondsWithNoneLeaving() {
        NodeUpgrade upgrade = upgrade("to-1-35", NodeUpgradeStatus.Phase.Running);
        upgrade.getStatus().getNodes().add(upgradeNode("w1", UpgradeNodeStatus.Phase.Draining, "2026-11-30T12:00:00Z"));
        upgrade.getStatus().getNodes().add(upgradeNode("w2", UpgradeNodeStatus.Phase.Draining, "2026-11-30T12:00:05Z"));
        upgrade.getStatus().getNodes().add(upgradeNode("w4", UpgradeNodeStatus.Phase.Pending, "2026-11-30T11:00:00Z"));
        ScaleDown scaleDown = scaleDown("remove-one", ScaleDownStatus.Phase.Draining);
        ScaleDownNodeStatus node = new ScaleDownNodeStatus();
        node.setName("w3");
        node.setPhase(ScaleDownNodeStatus.Phase.Draining);
        node.setDrain(new DrainState());
        scaleDown.getStatus().getNodes().add(node);

        assertThat(StatusSeries.drainsBlocked(List.of(upgrade), List.of(scaleDown), java.time.Instant.parse("2026-11-30T12:00:12Z")))
                .containsExactlyInAnyOrder(
                new Sample(Map.of("kind", "NodeUpgrade", "name", "to-1-35", "node", "w1"), 1),
                new Sample(Map.of("kind", "NodeUpgrade", "name", "to-1-35", "node", "w2"), 0),
                new Sample(Map.of("kind", "ScaleDown", "name", "remove-one", "node", "w3"), 0));
    }

    @Test
    void findingsOfEveryTypeAndTheLastCompleteRunComeFromTheStatus() {
        VMMapAudit audit = audit("cluster", false, 120);
        audit.getStatus().setLastRun(new VMMapAuditStatus.LastRun());
        audit.getStatus().setFindingCounts(Map.of("UnmappedVm", 2));
        audit.getStatus().setLastCompleteRunAt("2026-11-30T12:00:00Z");

        assertThat(StatusSeries.findings(List.of(audit))).hasSize(dev.cks.nodeops.audit.VmMapFinding.Type.values().length)
                .contains(new Sample(Map.of("audit", "cluster", "type", "UnmappedVm"), 2), new Sample(Map.of("audit", "cluster", "type", "NodeWithoutVm"), 0));
        assertThat(StatusSeries.lastCompleteRuns(List.of(audit))).containsExactly(new Sample(Map.of("audit", "cluster"), 1796040000));
        assertThat(StatusSeries.findings(List.of(audit("never-ran", false, null)))).as("no run, no claim of zero findings").isEmpty();
    }

    @Test
    void anAuditHasAnIntervalOnlyWhileItIsMeantToRun() {
        List<VMMapAudit> audits = List.of(audit("a", false, null), audit("b", true, 60), audit("c", false, 60));

        assertThat(StatusSeries.auditIntervals(audits, AuditSettings.DEFAULTS)).containsExactlyInAnyOrder(
                new Sample(Map.of("audit", "a"), 300), new Sample(Map.of("audit", "c"), 60));
        assertThat(StatusSeries.auditIntervals(audits, AuditSettings.DEFAULTS.withEnabled(false))).isEmpty();
    }

    private static NodeUpgrade upgrade(String name, NodeUpgradeStatus.Phase phase) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName(name);
        upgrade.setStatus(new NodeUpgradeStatus());
        upgrade.getStatus().setPhase(phase);
        return upgrade;
    }

    private static UpgradeNodeStatus upgradeNode(String name, UpgradeNodeStatus.Phase phase, String blockSince) {
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName(name);
        node.setPhase(phase);
        node.setDrain(new DrainState());
        node.getDrain().setBlockCause("shop/web-pdb");
        node.getDrain().setBlockSince(blockSince);
        return node;
    }

    private static ScaleDown scaleDown(String name, ScaleDownStatus.Phase phase) {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName(name);
        scaleDown.setStatus(new ScaleDownStatus());
        scaleDown.getStatus().setPhase(phase);
        return scaleDown;
    }

    private static VMMapAudit audit(String name, boolean suspended, Integer interval) {
        VMMapAudit audit = new VMMapAudit();
        audit.getMetadata().setName(name);
        audit.setSpec(new VMMapAuditSpec());
        audit.getSpec().setSuspend(suspended);
        audit.getSpec().setIntervalSeconds(interval);
        audit.setStatus(new VMMapAuditStatus());
        return audit;
    }
}
