package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;

/** The operator killed (SIGKILL) half-way and started again finishes the ScaleDown: nothing done twice, nothing left cordoned. */
class ScaleDownRestartIT extends ScaleDownScenario {
    /** Includes the new process taking over the leader Lease the killed one still holds. */
    private static final Duration WITHIN = Duration.ofSeconds(150);

    ScaleDownRestartIT() {
        super("sdr", "CloudManaged");
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
    @ValueSource(strings = {"scaledown.locked", "scaledown.cordoned@2", "scaledown.drain-step", "scaledown.scale.answered", "scaledown.scale.done",
        "scaledown.node-deleted"})
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
        assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(Phase.Removed);
        world.assertNodeGone(first);
        world.assertNodeGone(second);
        assertThat(world.client.nodes().withName(spare).get().getMetadata().getAnnotations())
                .doesNotContainKeys(dev.cks.nodeops.common.NodeAnnotations.LOCK, dev.cks.nodeops.common.NodeAnnotations.CORDONED_BY);
        assertThat(world.isUnschedulable(spare)).isFalse();
        pool.awaitReadyPods("web", 2);
        assertThat(pool.podsOn(spare)).hasSize(2);
    }

    /**
     * External nodes: halted right after CloudStack answered removeNodesFromKubernetesCluster, before its job id
     * was written; the new process finds the request's job (by the key's jobs) instead of asking again.
     */
    @Test
    void haltedRightAfterRemoveNodesWasAnsweredANewProcessFollowsTheSameRemoval() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        String spare = world.addWorker(pool);
        world.simulator().setExternalNode(world.fixture.vmId(first), true);
        world.simulator().setExternalNode(world.fixture.vmId(second), true);
        String point = "scaledown.remove-nodes.answered";
        world.restartHaltingAt(point);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        world.awaitHaltedAndRestart(point, WITHIN);
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("removeNodesFromKubernetesCluster")).as("one removeNodesFromKubernetesCluster call").hasSize(1);
        assertThat(world.simulator().calls("listAsyncJobs")).as("the lost job looked up").isNotEmpty();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).isEmpty();
        assertThat(done.getStatus().getRemoval().getCommand()).isEqualTo(ScaleDownStatus.RemovalCommand.removeNodesFromKubernetesCluster);
        assertThat(world.simulator().findVm(world.fixture.vmId(first))).as("the VM stays").isPresent();
        world.assertNodeGone(first);
        world.assertNodeGone(second);
        assertThat(world.isUnschedulable(spare)).isFalse();
    }
}
