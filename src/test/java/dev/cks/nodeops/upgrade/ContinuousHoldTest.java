package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

/**
 * The decisions of a Continuous NodeUpgrade, without a cluster: the Nodes as plain objects (a control-plane node and
 * workers in various states), the other actor being whatever made them join, flap, opt out or run a newer kubelet
 * (the cluster-autoscaler, CloudStack's scale-up, a person), and for overlaps a second Continuous NodeUpgrade.
 */
class ContinuousHoldTest {
    private static final String FROM = "v1.34.2";
    private static final String TARGET = "v1.35.9";
    private static final Instant NOW = Instant.parse("2026-06-01T10:00:00Z");

    /** A held cluster: every entry Succeeded at the target, as after the rollout. */
    private static List<UpgradeNodeStatus> upgraded(String... names) {
        List<UpgradeNodeStatus> entries = new ArrayList<>();
        for (String name : names) {
            UpgradeNodeStatus entry = new UpgradeNodeStatus();
            entry.setName(name);
            entry.setPhase(Phase.Succeeded);
            entry.setAction(Action.Node);
            entry.setFromVersion(FROM);
            entry.setVersion(TARGET);
            entry.setCompletedAt("2026-06-01T09:00:00Z");
            entries.add(entry);
        }
        return entries;
    }

    @Test
    void aWorkerThatJoinedBelowTheTargetIsPlannedAgainWithAnAttemptOfItsOwn() {
        List<Node> cluster = List.of(node("c-control-1", true, "2026-01-01T00:00:00Z", TARGET, true), node("w1").version(TARGET).build(),
                node("w-new").created("2026-06-01T09:59:00Z").version(FROM).build());

        ContinuousHold.Scan scan = ContinuousHold.scan(cluster, NodeSelection.everything(), TARGET, upgraded("c-control-1", "w1"), NOW);

        assertThat(scan.corrections()).singleElement().satisfies(c -> {
            assertThat(c.entry()).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase, UpgradeNodeStatus::getAction,
                    UpgradeNodeStatus::getFromVersion).containsExactly("w-new", Phase.Pending, Action.Node, FROM);
            assertThat(c.entry().getAttempt()).isEqualTo("2026-06-01T10:00:00Z");
            assertThat(c.message()).contains("w-new").contains("runs " + FROM).contains("it joined");
        });
        assertThat(scan.belowTarget()).isEqualTo(1);
        assertThat(scan.newer()).isEmpty();
    }

    @Test
    void aWorkerBackFromNotReadyAtTheOldVersionIsCorrectedOnlyOnceItIsReady() {
        List<UpgradeNodeStatus> held = upgraded("w1");
        ContinuousHold.Scan whileDown = ContinuousHold.scan(List.of(node("w1").version(FROM).ready(false).build()), NodeSelection.everything(), TARGET, held, NOW);
        ContinuousHold.Scan back = ContinuousHold.scan(List.of(node("w1").version(FROM).build()), NodeSelection.everything(), TARGET, held, NOW);

        assertThat(whileDown.corrections()).isEmpty();
        assertThat(whileDown.notNow()).singleElement().satisfies(why -> assertThat(why).contains("w1").contains("not Ready"));
        assertThat(whileDown.belowTarget()).isEqualTo(1);
        assertThat(back.corrections()).extracting(c -> c.entry().getName()).containsExactly("w1");
        assertThat(back.corrections().get(0).message()).contains("was at " + TARGET + " before");
    }

    @Test
    void aNodeNewerThanTheTargetIsReportedAndNeverPlanned() {
        List<Node> cluster = List.of(node("w1").version(TARGET).build(), node("w-newer").version("v1.36.0").build(),
                node("w-patch").version("v1.35.10").build());

        ContinuousHold.Scan scan = ContinuousHold.scan(cluster, NodeSelection.everything(), TARGET, upgraded("w1"), NOW);
        List<UpgradeNodeStatus> rollout = ContinuousHold.neverDown(UpgradePlan.plan(cluster, NodeSelection.everything(), TARGET), TARGET, "a1");

        assertThat(scan.corrections()).isEmpty();
        assertThat(scan.newer()).containsExactlyInAnyOrder("w-newer (v1.36.0)", "w-patch (v1.35.10)");
        assertThat(rollout).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase)
                .contains(tuple("w-newer", Phase.Skipped), tuple("w-patch", Phase.Skipped));
        assertThat(rollout).filteredOn(n -> n.getName().equals("w-newer")).singleElement()
                .satisfies(n -> assertThat(n.getSkipReason()).contains("never takes a node down"));
    }

    @Test
    void aRolloutPlanOfContinuousModeGivesEachNodeToUpgradeItsAttemptAndLeavesTheOthers() {
        List<Node> cluster = List.of(node("w1").version(FROM).build(), node("w2").version(TARGET).build());

        List<UpgradeNodeStatus> rollout = ContinuousHold.neverDown(UpgradePlan.plan(cluster, NodeSelection.everything(), TARGET), TARGET, "a1");

        assertThat(rollout).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase, UpgradeNodeStatus::getAttempt)
                .containsExactlyInAnyOrder(tuple("w1", Phase.Pending, "a1"), tuple("w2", Phase.Skipped, null));
    }

    @Test
    void aNodeInProgressOrOptedOutOrOutsideTheSelectorIsNotPlannedAgain() {
        List<UpgradeNodeStatus> entries = upgraded("w1");
        entries.get(0).setPhase(Phase.Draining);
        List<Node> cluster = List.of(node("w1").version(FROM).label("pool", "a").build(),
                node("w-out").version(FROM).label("pool", "a").annotation(NodeAnnotations.EXCLUDE, "true").build(),
                node("w-other").version(FROM).label("pool", "b").build());

        ContinuousHold.Scan scan = ContinuousHold.scan(cluster, NodeSelection.matchLabels(Map.of("pool", "a")), TARGET, entries, NOW);

        assertThat(scan.corrections()).isEmpty();
        assertThat(scan.belowTarget()).as("w1 and w-out; w-other is not selected").isEqualTo(2);
        assertThat(scan.notNow()).singleElement().satisfies(why -> assertThat(why).contains("w-out").contains("opts out"));
    }

    @Test
    void aNodeThatNoLongerOptsOutIsCorrectedAndSaysSo() {
        List<UpgradeNodeStatus> entries = upgraded("w1");
        entries.get(0).setPhase(Phase.Skipped);
        entries.get(0).setVersion(null);
        entries.get(0).setSkipReason("it opts out of node operations (nodeops.cks.dev/exclude: true)");

        ContinuousHold.Scan scan = ContinuousHold.scan(List.of(node("w1").version(FROM).build()), NodeSelection.everything(), TARGET, entries, NOW);

        assertThat(scan.corrections()).singleElement().satisfies(c -> assertThat(c.message()).contains("it was not upgraded before").contains("opts out"));
    }

    @Test
    void entriesOfDeletedNodesThatAreDoneWithLeaveTheStatusAndCorrectionsReplaceTheirNodesEarlierEntry() {
        List<UpgradeNodeStatus> entries = upgraded("w1", "w-gone");
        ContinuousHold.Scan scan = ContinuousHold.scan(List.of(node("w1").version(FROM).build(), node("w-new").version(FROM).build()),
                NodeSelection.everything(), TARGET, entries, NOW);

        List<UpgradeNodeStatus> merged = ContinuousHold.withCorrections(entries, scan.corrections());

        assertThat(scan.gone()).containsExactly("w-gone");
        assertThat(merged).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase)
                .containsExactly(tuple("w1", Phase.Pending), tuple("w-gone", Phase.Succeeded), tuple("w-new", Phase.Pending));
    }

    @Test
    void theLastCorrectedNodeIsTheLastOneDoneAfterTheHoldBegan() {
        List<UpgradeNodeStatus> entries = upgraded("w1", "w2", "w3");
        entries.get(1).setCompletedAt("2026-06-01T10:05:00Z");
        entries.get(2).setCompletedAt("2026-06-01T10:07:00Z");

        assertThat(ContinuousHold.lastCorrected(entries, "2026-06-01T10:00:00Z")).get().extracting(UpgradeNodeStatus::getName).isEqualTo("w3");
        assertThat(ContinuousHold.lastCorrected(entries, "2026-06-01T10:10:00Z")).isEmpty();
        assertThat(ContinuousHold.lastCorrected(entries, null)).as("not held yet: the rollout corrected nothing").isEmpty();
    }

    @Test
    void twoContinuousUpgradesOverOneNodeEachNameTheOtherAndOnlyTheLaterIsToBeRefused() {
        NodeUpgrade first = upgrade("hold-a", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of("pool", "a"));
        NodeUpgrade second = upgrade("hold-b", "2026-06-01T09:00:00Z", UpgradeMode.Continuous, Map.of());
        NodeUpgrade once = upgrade("once", "2026-06-01T07:00:00Z", UpgradeMode.Once, Map.of());
        List<Node> cluster = List.of(node("w1").label("pool", "a").build(), node("w2").build());
        List<NodeUpgrade> all = List.of(first, second, once);

        ContinuousHold.Overlaps ofFirst = ContinuousHold.overlaps(first, all, cluster);
        ContinuousHold.Overlaps ofSecond = ContinuousHold.overlaps(second, all, cluster);

        assertThat(ofFirst.earlier()).as("a Once upgrade is kept apart by the node lock, not refused").isEmpty();
        assertThat(ofFirst.later()).containsExactlyEntriesOf(Map.of("hold-b", List.of("w1")));
        assertThat(ofSecond.earlier()).containsExactlyEntriesOf(Map.of("hold-a", List.of("w1")));
        assertThat(ContinuousHold.overlapRefusal(second, ofSecond.earlier())).contains("hold-b").contains("hold-a").contains("w1")
                .contains("Nothing was cordoned");
    }

    /**
     * Shape: a kubeadm cluster, a control-plane node and two workers (one of pool a). Actor: two people holding versions,
     * one over "workers only" (matchExpressions) and one over the control plane (Exists), one with the deprecated
     * nodeSelector over pool a: the overlap check sees through each selector shape (#35).
     */
    @Test
    void theOverlapCheckMatchesExpressionsAndTheDeprecatedNodeSelectorAlike() {
        NodeUpgrade workers = upgrade("hold-workers", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of());
        workers.getSpec().setSelector(new LabelSelectorBuilder().addNewMatchExpression().withKey(UpgradePlan.CONTROL_PLANE_LABEL)
                .withOperator("DoesNotExist").endMatchExpression().build());
        NodeUpgrade controlPlane = upgrade("hold-control-plane", "2026-06-01T09:00:00Z", UpgradeMode.Continuous, Map.of());
        controlPlane.getSpec().setSelector(new LabelSelectorBuilder().addNewMatchExpression().withKey(UpgradePlan.CONTROL_PLANE_LABEL)
                .withOperator("Exists").endMatchExpression().build());
        NodeUpgrade poolA = upgrade("hold-pool-a", "2026-06-01T10:00:00Z", UpgradeMode.Continuous, Map.of());
        poolA.getSpec().setSelector(null);
        poolA.getSpec().setNodeSelector(Map.of("pool", "a"));
        List<Node> cluster = List.of(node("cp").controlPlane().build(), node("w1").label("pool", "a").build(), node("w2").build());
        List<NodeUpgrade> all = List.of(workers, controlPlane, poolA);

        assertThat(ContinuousHold.overlaps(workers, all, cluster).later()).containsExactlyEntriesOf(Map.of("hold-pool-a", List.of("w1")));
        assertThat(ContinuousHold.overlaps(controlPlane, all, cluster).earlier()).as("the control plane is no worker").isEmpty();
        assertThat(ContinuousHold.overlaps(controlPlane, all, cluster).later()).isEmpty();
        assertThat(ContinuousHold.overlaps(poolA, all, cluster).earlier()).containsExactlyEntriesOf(Map.of("hold-workers", List.of("w1")));
    }

    @Test
    void continuousUpgradesOverDisjointNodesDoNotOverlapAndTheSameSecondIsDecidedByName() {
        NodeUpgrade a = upgrade("hold-a", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of("pool", "a"));
        NodeUpgrade b = upgrade("hold-b", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of("pool", "b"));
        NodeUpgrade all = upgrade("hold-all", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of());
        List<Node> cluster = List.of(node("w1").label("pool", "a").build(), node("w2").label("pool", "b").build());

        assertThat(ContinuousHold.overlaps(a, List.of(a, b), cluster).earlier()).isEmpty();
        assertThat(ContinuousHold.overlaps(a, List.of(a, b), cluster).later()).isEmpty();
        assertThat(ContinuousHold.overlaps(a, List.of(a, all), cluster).later()).as("hold-a sorts before hold-all").containsKey("hold-all");
        assertThat(ContinuousHold.overlaps(all, List.of(a, all), cluster).earlier()).containsKey("hold-a");
    }

    @Test
    void aNewTargetStartsANewRolloutOnlyForContinuousModeAndOnlyOnceNoNodeIsInProgress() {
        NodeUpgradeSpec spec = upgrade("hold", "2026-06-01T08:00:00Z", UpgradeMode.Continuous, Map.of()).getSpec();
        NodeUpgradeStatus status = new NodeUpgradeStatus();
        status.setTargetVersion(FROM);
        status.setNodes(upgraded("w1"));

        assertThat(ContinuousHold.newRollout(spec, status)).isTrue();
        status.getNodes().get(0).setPhase(Phase.Upgrading);
        assertThat(ContinuousHold.newRollout(spec, status)).as("w1's Job runs at the old target").isFalse();
        assertThat(ContinuousHold.targetChanged(spec, status)).isTrue();
        status.setTargetVersion(TARGET + "+vendor.1");
        assertThat(ContinuousHold.targetChanged(spec, status)).as("build metadata is no other version").isFalse();
        spec.setMode(UpgradeMode.Once);
        status.setTargetVersion(FROM);
        assertThat(ContinuousHold.targetChanged(spec, status)).isFalse();
    }

    private static NodeUpgrade upgrade(String name, String created, UpgradeMode mode, Map<String, String> selector) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName(name).withUid(name + "-uid").withCreationTimestamp(created).build());
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setMode(mode);
        spec.setSelector(new LabelSelector(null, selector));
        upgrade.setSpec(spec);
        return upgrade;
    }
}
