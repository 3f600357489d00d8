package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testbed.CloudStackFixture;

/** The operator killed (SIGKILL) half-way and started again finishes the ScaleDown: nothing done twice, nothing left cordoned. */
class ScaleDownRestartIT extends ScaleDownScenario {
    /** Includes the new process taking over the leader Lease the killed one still holds. */
    private static final Duration WITHIN = Duration.ofSeconds(150);

    ScaleDownRestartIT() {
        super("sdr", "CloudManaged");
    }

    /** Halted between a write's intent and its sending, a new process waits until CloudStack could no longer take it. */
    @Override
    protected Map<String, String> operatorProperties() {
        return CloudStackFixture.SHORT_SIGNATURE_LIFETIME;
    }

    @Test
    void killedMidDrainAndStartedAgainCompletesWithOneScaleCall() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        pool.deployment("web", 2, false);
        // Holds the drain of the first node until the test lets it go: the kill lands mid-drain for sure.
        pool.budget("web-pdb", "web", 2, null);
        pool.awaitReadyPods("web", 2);
        pool.awaitBudget("web-pdb", 2, 2);
        String spare = world.addWorker(pool);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(120, 0));
        world.await(name, "draining, blocked by the budget", sd -> sd != null && sd.getStatus() != null && sd.getStatus().getNodes().stream()
                .anyMatch(n -> n.getPhase() == Phase.Draining && n.getDrain() != null && n.getDrain().getBlockedBy() != null
                        && n.getDrain().getBlockedBy().contains("web-pdb")), WITHIN);
        world.killOperator();
        assertThat(world.isUnschedulable(first) && world.isUnschedulable(second)).as("both stay cordoned while no operator runs").isTrue();

        world.client.policy().v1().podDisruptionBudget().inNamespace(pool.namespace).withName("web-pdb").delete();
        world.startOperator();
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("scaleKubernetesCluster")).as("no duplicate scale call").hasSize(1);
        assertThat(Arrays.asList(world.simulator().calls("scaleKubernetesCluster").get(0).param("nodeids").split(",")))
                .containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(Phase.Removed);
        pool.awaitReadyPods("web", 2);
        assertThat(pool.podsOn(spare)).hasSize(2);
        world.assertNodeGone(first);
        world.assertNodeGone(second);
    }

    @Test
    void killedWhileCloudStackRunsTheScaleJobPollsTheSameJobAfterRestart() {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().planJob("scaleKubernetesCluster", JobOutcome.neverFinishes());

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown removing = world.await(name, "the scale job recorded", sd -> sd != null && sd.getStatus() != null
                && sd.getStatus().getRemoval() != null && sd.getStatus().getRemoval().getJobId() != null, WITHIN);
        world.killOperator();
        String jobId = removing.getStatus().getRemoval().getJobId();
        world.startOperator();

        // The restarted operator keeps polling the recorded job; the job never finishes, so the phase stays Removing.
        long pollsBefore = world.simulator().calls("queryAsyncJobResult").stream().filter(c -> jobId.equals(c.param("jobid"))).count();
        org.awaitility.Awaitility.await("the restarted operator polls job " + jobId).atMost(WITHIN)
                .until(() -> world.simulator().calls("queryAsyncJobResult").stream().filter(c -> jobId.equals(c.param("jobid"))).count() > pollsBefore);
        assertThat(world.get(name).getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Removing);
        assertThat(world.simulator().calls("scaleKubernetesCluster")).as("no second scale call after the restart").hasSize(1);
        world.simulator().finishJob(jobId);
        world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);
    }

    /**
     * The operator process halts (as on SIGKILL) right after a side effect, before its record; a new
     * process finishes the ScaleDown from what the API server holds: one scale executed, the Nodes gone,
     * no cordon or lock of ours left on the spare. docs/reliability.md lists these points.
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"scaledown.locked", "scaledown.cordoned@2", "scaledown.drain-step", "scaledown.scale.intent", "scaledown.scale.answered",
        "scaledown.scale.done", "scaledown.node-deleted"})
    void haltedRightAfterASideEffectANewProcessFinishesTheScaleDown(String point) {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        // Pods on the two targets, so that their drains evict something (scaledown.drain-step).
        pool.deployment("web", 2, false);
        pool.awaitReadyPods("web", 2);
        String spare = world.addWorker(pool);
        world.restartHaltingAt(point);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        world.awaitHaltedAndRestart(point, WITHIN);
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("scaleKubernetesCluster")).as("one scale call").hasSize(1);
        assertSentOnlyOnceItCouldNoLongerArrive(point);
        assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(Phase.Removed);
        world.assertNodeGone(first);
        world.assertNodeGone(second);
        assertNotHeld(spare);
        pool.awaitReadyPods("web", 2);
        assertThat(pool.podsOn(spare)).hasSize(2);
    }

    /**
     * External nodes, halted at each point of a removeNodesFromKubernetesCluster in turn (one process per point): right
     * after its intent was recorded (the new process finds no job and sends it once CloudStack could no longer take the
     * unsent one), after CloudStack answered it (the new process finds the request's job by the key's jobs instead of
     * asking again), after its job was seen done (before any Node is deleted).
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"scaledown.remove-nodes.answered", "scaledown.remove-nodes.intent,scaledown.remove-nodes.done"})
    void haltedRightAfterARemoveNodesStepANewProcessFollowsTheSameRemoval(String points) {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        String spare = world.addWorker(pool);
        world.simulator().setExternalNode(world.fixture.vmId(first), true);
        world.simulator().setExternalNode(world.fixture.vmId(second), true);
        List<String> halts = List.of(points.split(","));
        world.restartHaltingAt(halts.get(0));

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        world.awaitHaltedAtEachAndRestart(halts, WITHIN);
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("removeNodesFromKubernetesCluster")).as("one removeNodesFromKubernetesCluster call").hasSize(1);
        assertThat(world.simulator().calls("listAsyncJobs")).as("the lost job looked up").isNotEmpty();
        assertSentOnlyOnceItCouldNoLongerArrive(halts.get(0));
        assertThat(world.simulator().calls("scaleKubernetesCluster")).isEmpty();
        assertThat(done.getStatus().getRemoval().getCommand()).isEqualTo(ScaleDownStatus.RemovalCommand.removeNodesFromKubernetesCluster);
        assertThat(world.simulator().findVm(world.fixture.vmId(first))).as("the VM stays").isPresent();
        world.assertNodeGone(first);
        world.assertNodeGone(second);
        assertNotHeld(spare);
    }

    /**
     * A drain blocked by a budget rolls back: halted right after the first node was given back, before RolledBack was
     * written; the new process gives back the rest and ends RolledBack, nothing asked of CloudStack.
     */
    @Test
    void haltedRightAfterARollbackGaveANodeBackANewProcessFinishesTheRollback() {
        String blocked = workerHeldByABudget();
        String other = world.addWorker(pool);
        world.addWorker(pool);
        String point = "scaledown.rollback.released";
        world.restartHaltingAt(point);

        world.create(name, List.of(blocked, other), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(3, 0));
        world.awaitHaltedAndRestart(point, WITHIN);
        ScaleDown rolledBack = world.awaitPhase(name, ScaleDownStatus.Phase.RolledBack, WITHIN);

        assertThat(ScaleDownBed.condition(rolledBack, dev.cks.nodeops.common.Conditions.ROLLED_BACK).getMessage()).contains("node " + blocked);
        assertThat(world.cloudStackWrites()).as("nothing was asked of CloudStack").isEmpty();
        assertNotHeld(blocked);
        assertNotHeld(other);
    }

    /**
     * CloudStack's scale job fails: halted right after a node still in the cluster was given back, before Failed was
     * written; the new process gives back the other one and ends Failed, the scale asked once.
     */
    @Test
    void haltedRightAfterAFailedRemovalGaveANodeBackANewProcessEndsFailed() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().planJob("scaleKubernetesCluster", JobOutcome.fails(530, "Failed to scale Kubernetes cluster: VM destroy failed"));
        String point = "scaledown.failed.released";
        world.restartHaltingAt(point);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        world.awaitHaltedAndRestart(point, WITHIN);
        ScaleDown failed = world.awaitPhase(name, ScaleDownStatus.Phase.Failed, WITHIN);

        assertThat(ScaleDownBed.condition(failed, dev.cks.nodeops.common.Conditions.FAILED).getMessage()).contains("VM destroy failed");
        assertThat(failed.getStatus().getRemoval().getRemainingVmIds())
                .containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(world.simulator().calls("scaleKubernetesCluster")).as("one scale call").hasSize(1);
        assertNotHeld(first);
        assertNotHeld(second);
    }

    /**
     * Deleted while a drain is blocked: halted right after the first node was given back, before the finalizer went;
     * the new process gives back the other one and lets the ScaleDown go, nothing asked of CloudStack.
     */
    @Test
    void haltedRightAfterADeletedScaleDownGaveANodeBackANewProcessLetsItGo() {
        String blocked = workerHeldByABudget();
        String other = world.addWorker(pool);
        world.addWorker(pool);
        String point = "scaledown.deleted.released";
        world.restartHaltingAt(point);

        world.create(name, List.of(blocked, other), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(300, 0));
        world.await(name, "draining " + blocked, sd -> sd != null && sd.getStatus() != null && blocked.equals(sd.getStatus().getCurrentNode()), WITHIN);
        world.client.resources(ScaleDown.class).withName(name).delete();
        world.awaitHaltedAndRestart(point, WITHIN);
        org.awaitility.Awaitility.await("ScaleDown " + name + " gone").atMost(WITHIN).until(() -> world.get(name) == null);

        assertThat(world.cloudStackWrites()).as("nothing was asked of CloudStack").isEmpty();
        assertNotHeld(blocked);
        assertNotHeld(other);
    }

    /**
     * Halted between recording a write and sending it: the new process found no trace of it and sent it (once) only
     * when CloudStack could no longer have taken the recorded request (event RequestResent).
     */
    private void assertSentOnlyOnceItCouldNoLongerArrive(String point) {
        if (point.endsWith(".intent")) {
            assertThat(world.bed.eventsOf(name)).extracting(io.fabric8.kubernetes.api.model.Event::getReason).contains("RequestResent");
        }
    }

    /** Schedulable, and neither cordoned nor locked by us. */
    private void assertNotHeld(String node) {
        assertThat(world.operatorAnnotations(node)).as("our cordon or lock left on %s", node).isEmpty();
        assertThat(world.isUnschedulable(node)).as("%s left cordoned", node).isFalse();
    }
}
