package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackClientSettings;
import dev.cks.nodeops.cloudstack.Sleeper;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedAccount;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.operation.CloudStackWrite;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testbed.CloudStackFixture;
import io.fabric8.kubernetes.api.model.Event;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * A ScaleDown's CloudStack writes among what else acts on CloudStack: another cluster of the same account
 * and its user, CloudStack's own clock off ours, CloudStack unreachable after the drains. The operator runs
 * as its own process against the bed; the simulator lists jobs per account as CloudStack does.
 */
class CloudStackWorldIT extends ScaleDownScenario {
    private static final Duration WITHIN = Duration.ofSeconds(150);

    CloudStackWorldIT() {
        super("csw", "CloudManaged");
    }

    /** A lost answer is sent again once CloudStack can no longer take it: 30 s + 10 s here, not 11.5 minutes. */
    @Override
    protected Map<String, String> operatorProperties() {
        return CloudStackFixture.SHORT_SIGNATURE_LIFETIME;
    }

    /**
     * Shape: two CKS clusters in one account. Actor: another user of that account (the UI, or the other
     * cluster's own operator) scaling the other cluster while our scale's answer is lost. Before, with the
     * account's jobs listed as CloudStack lists them, the other cluster's scale was adopted as ours and its
     * failure became our ScaleDown's.
     */
    @Test
    void anotherClustersScaleInTheSameAccountIsNeitherTakenForOursNorSentBeside() {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        SimulatedCluster other = world.simulator().addCluster(name + "-b", Owner.of(world.simulator().defaultAccount()), 1, 2);
        String otherVm = world.simulator().addClusterVm(other, name + "-b-node-3", NodeRole.WORKER).id();
        SimulatedAccount ui = world.simulator().addUser(world.simulator().defaultAccount(), name + "-ui");
        CloudStackClient uiClient = new CloudStackClient(world.simulator().credentials(ui), CloudStackClientSettings.DEFAULTS,
                new SimpleMeterRegistry(), Clock.systemUTC(), Sleeper.REAL);
        // Our scale never reaches CloudStack; the other cluster's runs until the test lets it end.
        world.simulator().injectFault("scaleKubernetesCluster", Fault.droppedConnection());
        world.simulator().planJob("scaleKubernetesCluster", JobOutcome.neverFinishes());

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(60, 0));
        world.await(name, "our scale's answer lost", sd -> waitingFor(sd, CloudStackWrite.ANSWER_LOST), WITHIN);
        String otherJob = uiClient.startScaleKubernetesCluster(other.id(), List.of(otherVm));
        world.await(name, "the other cluster's running scale waited for, not taken", sd -> progressing(sd).contains(otherJob)
                && progressing(sd).contains("may be ours"), WITHIN);
        String ours = world.fixture.cluster().id();
        // Past our request's signature window: while that job runs, nothing is sent beside it and it is not adopted.
        Duration past = CloudStackFixture.SHORT_REQUEST_WINDOW.plusSeconds(10);
        org.awaitility.Awaitility.await().pollDelay(past).atMost(past.plusSeconds(10)).until(() -> true);
        assertThat(world.get(name).getStatus().getRemoval().getJobId()).as("not adopted").isNull();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).filteredOn(call -> ours.equals(call.param("id"))).hasSize(1);

        world.simulator().finishJob(otherJob);
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("scaleKubernetesCluster")).filteredOn(call -> ours.equals(call.param("id")))
                .as("the dropped request and the one sent again once it could no longer arrive").hasSize(2);
        assertThat(world.bed.eventsOf(name)).extracting(Event::getReason).contains(CloudStackWrite.REQUEST_RESENT);
        assertThat(done.getStatus().getRemoval().getJobId()).isNotEqualTo(otherJob);
        world.assertNodeGone(node);
    }

    /**
     * Shape: any. Actor: CloudStack's clock, 3 minutes behind ours or 11 minutes ahead (no NTP on the
     * management server). Our scale acts but its answer is lost. Before: 3 minutes behind, its job was
     * created "before" the request by our clock, never found, and the scale sent a second time; 11 minutes
     * ahead, every request expired on arrival and was refused as if the keys were wrong.
     */
    @ParameterizedTest
    @ValueSource(ints = {-180, 660})
    void aLostScaleAnswerWithCloudStacksClockOffOursEndsWithOneScale(int skewSeconds) {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().shiftClock(Duration.ofSeconds(skewSeconds));
        try {
            world.simulator().injectFault("scaleKubernetesCluster", Fault.actsThenGatewayTimeout());
            world.simulator().planJob("scaleKubernetesCluster", JobOutcome.succeedsAfter(Duration.ofSeconds(20)));

            world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(60, 0));
            ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

            assertThat(world.simulator().calls("scaleKubernetesCluster")).as("sent once, its job found by CloudStack's clock").hasSize(1);
            assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(ScaleDownNodeStatus.Phase.Removed);
            assertThat(world.metrics()).containsPattern("cks_cloudstack_clock_offset_seconds\\S* " + (skewSeconds < 0 ? "-" : "") + "1?[0-9]{2,3}\\.");
            assertThat(world.bed.eventsOf(name)).filteredOn(event -> CloudStackWrite.CLOCK_SKEW.equals(event.getReason()))
                    .extracting(Event::getMessage).anySatisfy(message -> assertThat(message).contains(skewSeconds < 0 ? "behind" : "ahead of"));
            world.assertNodeGone(node);
        } finally {
            world.simulator().shiftClock(Duration.ZERO);
        }
    }

    /**
     * Shape: any. Actor: CloudStack, unreachable once every node is drained (a management server down for
     * maintenance). Before, the ScaleDown sat in Removing past its deadline with its nodes cordoned for as long
     * as CloudStack stayed away.
     */
    @Test
    void cloudStackUnreachableAfterTheDrainsRollsBackAtTheDeadlineWithNothingRemoved() {
        String node = workerHeldByABudget();
        world.addWorker(pool);
        try {
            world.create(name, List.of(node), null, Removal.CloudStackScale, 60, ScaleDownBed.drain(50, 0));
            world.await(name, "draining, held by the budget", sd -> sd != null && sd.getStatus() != null && sd.getStatus().getNodes().stream()
                    .anyMatch(n -> n.getDrain() != null && n.getDrain().getBlockedBy() != null), WITHIN);
            // CloudStack goes away; then the budget lets the drain finish.
            Fault[] away = new Fault[400];
            java.util.Arrays.fill(away, Fault.droppedConnection());
            world.simulator().injectFault("listKubernetesClusters", away);
            world.client.policy().v1().podDisruptionBudget().inNamespace(pool.namespace).withName("web-pdb").delete();

            ScaleDown rolledBack = world.awaitPhase(name, ScaleDownStatus.Phase.RolledBack, WITHIN);

            assertThat(ScaleDownBed.condition(rolledBack, Conditions.ROLLED_BACK).getReason()).isEqualTo("DeadlinePassed");
            assertThat(ScaleDownBed.condition(rolledBack, Conditions.ROLLED_BACK).getMessage()).contains("before CloudStack was asked")
                    .contains("Nothing was removed");
            assertThat(world.isUnschedulable(node)).as("given back").isFalse();
            assertThat(world.cloudStackWrites()).isEmpty();
            assertThat(world.client.nodes().withName(node).get()).isNotNull();
        } finally {
            world.simulator().clearFaults();
        }
    }

    private static boolean waitingFor(ScaleDown sd, String reason) {
        if (sd == null || sd.getStatus() == null) {
            return false;
        }
        return sd.getStatus().getConditions().stream().anyMatch(c -> Conditions.WAITING.equals(c.getType()) && "True".equals(c.getStatus())
                && reason.equals(c.getReason()));
    }

    private static String progressing(ScaleDown sd) {
        if (sd == null || sd.getStatus() == null) {
            return "";
        }
        return sd.getStatus().getConditions().stream().filter(c -> Conditions.PROGRESSING.equals(c.getType())).map(c -> c.getMessage())
                .findFirst().orElse("");
    }
}
