package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.TARGET;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * A Continuous NodeUpgrade (Script executor) on the real control plane with KWOK workers, the packaged operator as its
 * own process and {@link KubeletUpgradeSimulation} playing the kubelets: after its rollout it holds the version while
 * the test plays the cluster's other actors — CKS scaling up (a worker joins at the version CloudStack records), a
 * node reinstalled from an old image (NotReady, then Ready at the old version), a node already newer, a person pausing
 * it, the operator killed mid-correction, and a second Continuous NodeUpgrade over the same nodes. One operator and one
 * bed serve every case; each has its own nodes.
 */
class NodeUpgradeContinuousIT extends NodeUpgradeScenario {
    /** Longer than any wait below: a correction seen within it was woken by the Node's change, not by the interval's timer. */
    private static final int INTERVAL_SECONDS = 120;
    private static final Duration ROLLOUT = Duration.ofSeconds(120);

    NodeUpgradeContinuousIT() {
        super("nucont");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return NodeUpgradeIT.installScript(shared);
    }

    /** Creates a Continuous NodeUpgrade over the test's nodes and waits until its rollout is over and it holds. */
    private NodeUpgrade holding(String name, int intervalSeconds) {
        bed.create(name, NodeUpgradeIT.script(), spec -> {
            spec.setMode(UpgradeMode.Continuous);
            spec.setHoldIntervalSeconds(intervalSeconds);
        });
        return bed.await(name, ROLLOUT, phase(NodeUpgradeStatus.Phase.Holding));
    }

    /** Holding again after correcting {@code node}, which it names as the last node it corrected. */
    private static Predicate<NodeUpgrade> heldAfterCorrecting(String node) {
        return u -> u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Holding && u.getStatus().getHold() != null
                && node.equals(u.getStatus().getHold().getLastCorrectedNode());
    }

    private List<Event> eventsFor(String upgrade, String reason) {
        return bed.events(upgrade).stream().filter(e -> reason.equals(e.getReason())).toList();
    }

    private List<io.fabric8.kubernetes.api.model.batch.v1.Job> upgradeJobsOn(String node) {
        return bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_NODE, node).list().getItems();
    }

    /**
     * Shape: one KWOK worker upgraded by the rollout, then a second worker joining at the old version (what a CKS
     * scale-up or its autoscaler does: CloudStack attaches the version it records). Actor: CKS adding the node. It is
     * taken within one interval by the Node's change, cordoned, drained, upgraded and given back like a rollout's node.
     */
    @Test
    void aWorkerThatJoinsAtTheOldVersionIsUpgradedWithinOneIntervalAndDrainedLikeAnyOther() {
        String w1 = bed.worker(FROM);
        NodeUpgrade held = holding("nu-cont-join", INTERVAL_SECONDS);
        assertThat(held.getStatus().getHold().getBelowTarget()).isZero();
        assertThat(Conditions.isTrue(held.getStatus().getConditions(), Conditions.HOLDING)).isTrue();
        assertThat(held.getStatus().getConditions()).as("it has not ended").noneMatch(c -> c.getType().equals(Conditions.SUCCEEDED));

        String joiner = bed.worker(FROM);
        bed.await("nu-cont-join", Duration.ofSeconds(INTERVAL_SECONDS), u -> u.getStatus().getNodes().stream().anyMatch(n -> n.getName().equals(joiner)));
        NodeUpgrade again = bed.await("nu-cont-join", ROLLOUT, heldAfterCorrecting(joiner));

        assertThat(nodeStatus(again, joiner)).satisfies(n -> {
            assertThat(n.getPhase()).isEqualTo(Phase.Succeeded);
            assertThat(n.getFromVersion()).isEqualTo(FROM);
            assertThat(n.getVersion()).isEqualTo(TARGET);
            assertThat(n.getCordonedByUs()).as("cordoned by the upgrade, as any node of a rollout").isTrue();
        });
        assertThat(again.getStatus().getHold().getLastCorrectedAt()).isNotNull();
        assertThat(kubelets.jobsOn(List.of(w1, joiner))).extracting(SeenJob::node).containsExactly(w1, joiner);
        assertThat(eventsFor("nu-cont-join", "Correcting")).singleElement().satisfies(e -> assertThat(e.getMessage()).contains(joiner).contains("it joined"));
        for (String reason : List.of("Cordoned", "Draining", "NodeDrained", "NodeUpgraded")) {
            assertThat(bed.events("nu-cont-join")).as("%s of the joiner", reason)
                    .anySatisfy(e -> assertThat(e.getReason() + " " + e.getMessage()).startsWith(reason).contains(joiner));
        }
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
        bed.nodes.forEach(n -> assertThat(UpgradePlan.isReadyAt(bed.node(n), TARGET)).as(n).isTrue());
    }

    /**
     * Shape: one KWOK worker upgraded by the rollout. Actor: the node reinstalled from an older image — its kubelet
     * NotReady, then Ready again at the old version (KWOK sets Ready back). It is upgraded once more, with a Job of its own.
     */
    @Test
    void aWorkerBackFromNotReadyAtTheOldVersionIsUpgradedAgain() {
        String w1 = bed.worker(FROM);
        holding("nu-cont-flap", INTERVAL_SECONDS);

        KubeletUpgradeSimulation.restartAt(bed.client, w1, FROM);
        NodeUpgrade again = bed.await("nu-cont-flap", ROLLOUT, heldAfterCorrecting(w1));

        assertThat(kubelets.jobsOn(List.of(w1))).as("the rollout's Job, then the correction's").hasSize(2)
                .extracting(SeenJob::name).doesNotHaveDuplicates();
        assertThat(nodeStatus(again, w1).getVersion()).isEqualTo(TARGET);
        assertThat(eventsFor("nu-cont-flap", "Correcting")).singleElement().satisfies(e -> assertThat(e.getMessage()).contains("came back older"));
        assertThat(UpgradePlan.isReadyAt(bed.node(w1), TARGET)).isTrue();
        bed.assertReleased(w1, false);
    }

    /**
     * Shape: one KWOK worker upgraded by the rollout, then one joining at a version newer than the target. Actor: a
     * person adding a node built from a newer image. It is reported (status, event) and never cordoned or given a Job.
     */
    @Test
    void aNodeNewerThanTheTargetIsLeftAloneAndReported() {
        bed.worker(FROM);
        holding("nu-cont-newer", INTERVAL_SECONDS);

        String newer = bed.worker("v1.36.1");
        NodeUpgrade reported = bed.await("nu-cont-newer", Duration.ofSeconds(INTERVAL_SECONDS), u -> u.getStatus().getHold() != null
                && u.getStatus().getHold().getAboveTarget() == 1);

        assertThat(reported.getStatus().getHold().getNewer()).containsExactly(newer + " (v1.36.1)");
        assertThat(reported.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Holding);
        assertThat(reported.getStatus().getMessage()).contains("newer, not touched: " + newer);
        assertThat(eventsFor("nu-cont-newer", "NewerThanTarget")).singleElement().satisfies(e -> assertThat(e.getMessage()).contains(newer));
        assertThat(reported.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName).doesNotContain(newer);
        assertThat(upgradeJobsOn(newer)).isEmpty();
        bed.assertReleased(newer, false);
        assertThat(bed.node(newer).getStatus().getNodeInfo().getKubeletVersion()).isEqualTo("v1.36.1");
    }

    /**
     * Shape: one KWOK worker upgraded by the rollout, the NodeUpgrade then paused, a worker joining at the old version.
     * Actors: a person setting spec.paused, CKS adding the node. The joiner waits untouched while paused, and is
     * upgraded once the pause is lifted.
     */
    @Test
    void whilePausedAJoinerWaitsUntouchedAndIsUpgradedWhenThePauseIsLifted() {
        bed.worker(FROM);
        holding("nu-cont-paused", INTERVAL_SECONDS);
        bed.client.resources(NodeUpgrade.class).withName("nu-cont-paused").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"paused\":true}}");

        String joiner = bed.worker(FROM);
        NodeUpgrade waiting = bed.await("nu-cont-paused", Duration.ofSeconds(INTERVAL_SECONDS), u -> u.getStatus().getNodes().stream()
                .anyMatch(n -> n.getName().equals(joiner)) && Conditions.isTrue(u.getStatus().getConditions(), Conditions.PAUSED));

        assertThat(waiting.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Waiting);
        assertThat(nodeStatus(waiting, joiner).getPhase()).isEqualTo(Phase.Pending);
        assertThat(upgradeJobsOn(joiner)).isEmpty();
        bed.assertReleased(joiner, false);

        bed.client.resources(NodeUpgrade.class).withName("nu-cont-paused").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"paused\":false}}");
        NodeUpgrade again = bed.await("nu-cont-paused", ROLLOUT, heldAfterCorrecting(joiner));
        assertThat(nodeStatus(again, joiner).getVersion()).isEqualTo(TARGET);
        bed.assertReleased(joiner, false);
    }

    /**
     * Shape: one KWOK worker upgraded by the rollout, a worker joining at the old version. Actor: the operator process
     * halted (as by SIGKILL) right after it created the joiner's upgrade Job, before recording it; a new process
     * finishes the correction from the status with that same Job: exactly one Job for the joiner.
     */
    @Test
    void killedRightAfterCreatingAJoinersJobANewProcessFinishesWithThatOneJob() throws java.io.IOException {
        bed.worker(FROM);
        holding("nu-cont-kill", INTERVAL_SECONDS);
        restartHaltingAt("nodeupgrade.job-created");

        String joiner = bed.worker(FROM);
        awaitHaltedAndRestart("nodeupgrade.job-created", ROLLOUT);
        NodeUpgrade again = bed.await("nu-cont-kill", ROLLOUT, heldAfterCorrecting(joiner));

        assertThat(upgradeJobsOn(joiner)).as("one upgrade Job for the joiner").hasSize(1);
        assertThat(kubelets.jobsOn(List.of(joiner))).hasSize(1);
        assertThat(UpgradeJob.nodeUpgradeOf(upgradeJobsOn(joiner).get(0))).contains("nu-cont-kill");
        assertThat(nodeStatus(again, joiner).getVersion()).isEqualTo(TARGET);
        bed.assertReleased(joiner, false);
    }

    /**
     * Shape: one KWOK worker held by a Continuous NodeUpgrade. Actor: a person creating a second Continuous NodeUpgrade
     * over the same node. The second is refused before touching anything, naming the first; the first names the second
     * and goes on holding.
     */
    @Test
    void aSecondContinuousUpgradeOverTheSameNodeIsRefusedAndBothNameEachOther() {
        String w1 = bed.worker(FROM);
        holding("nu-cont-first", 5);

        bed.create("nu-cont-second", NodeUpgradeIT.script(), spec -> spec.setMode(UpgradeMode.Continuous));
        NodeUpgrade refused = bed.await("nu-cont-second", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Failed));
        NodeUpgrade first = bed.await("nu-cont-first", Duration.ofSeconds(60), u -> Conditions.isTrue(u.getStatus().getConditions(), Conditions.OVERLAPPING));

        assertThat(Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("Overlaps");
            assertThat(c.getMessage()).contains("nu-cont-first").contains(w1).contains("Nothing was cordoned");
        });
        assertThat(Conditions.find(first.getStatus().getConditions(), Conditions.OVERLAPPING)).get()
                .satisfies(c -> assertThat(c.getMessage()).contains("nu-cont-second").contains(w1));
        assertThat(first.getStatus().getHold().getOverlappedBy()).containsExactly("nu-cont-second");
        assertThat(first.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Holding);
        assertThat(kubelets.jobsOn(List.of(w1))).as("only the first one's rollout").hasSize(1);
    }
}
