package dev.cks.nodeops.scaledown;

import static dev.cks.nodeops.testing.FakeNodeWork.done;
import static dev.cks.nodeops.testing.FakeNodeWork.givesUp;
import static dev.cks.nodeops.testing.FakeNodeWork.heldBy;
import static dev.cks.nodeops.testing.FakeNodeWork.moving;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.ReconcileLoop;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.SimulatedCloudStack;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * ScaleDown's lifecycle without a cluster: nodes in {@link FakeNodeWork}, CloudStack the project's
 * simulator over HTTP with the real client, time moved by hand. Each reconcile is called as JOSDK would,
 * and the clock moves by the delay it asked for.
 */
class ScaleDownReconcilerTest {
    private static final String CONTROL = "prod-control-a1";
    private static final String W1 = "prod-node-b1";
    private static final String W2 = "prod-node-b2";
    private static final String W3 = "prod-node-b3";

    private final ManualTime clock = new ManualTime(Instant.parse("2026-11-30T12:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SimulatedCloudStack cloudStack = new SimulatedCloudStack(clock, registry);
    private final CloudStackSimulator simulator = cloudStack.simulator;
    private final CloudStackClient client = cloudStack.client;
    private FakeNodeWork nodes;
    private final RecordingEvents events = new RecordingEvents();
    private final RecordingStatusStore store = new RecordingStatusStore();
    private SimulatedCluster cluster;
    private ScaleDownReconciler reconciler;
    private ScaleDown scaleDown;

    ScaleDownReconcilerTest() {
        world("CloudManaged");
    }

    /** A CKS cluster of this type with a control-plane node and three workers, on the Kubernetes side and in CloudStack. */
    private void world(String clusterType) {
        nodes = new FakeNodeWork();
        cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), clusterType, simulator.addSupportedVersion("1.34.2").id());
        simulator.addClusterVm(cluster, CONTROL, NodeRole.CONTROL);
        nodes.add(TestNodes.node(CONTROL).controlPlane().build());
        for (String worker : List.of(W1, W2, W3)) {
            simulator.addClusterVm(cluster, worker, NodeRole.WORKER);
            nodes.add(TestNodes.node(worker).build());
        }
        restartOperator();
    }

    /** A new reconciler, as after an operator restart; it knows nothing but what status says. */
    private void restartOperator() {
        CloudStackAccess access = cloudStack.access(cluster.id());
        OperationRecorder recorder = new OperationRecorder(ScaleDownReconciler.KIND, events, new OperationMetrics(registry));
        reconciler = new ScaleDownReconciler(clock, access, new TestSettings(), new OperationPorts(nodes, recorder, store));
    }

    @AfterEach
    void stopSimulator() {
        cloudStack.close();
    }

    private ScaleDown create(List<String> names, java.util.function.Consumer<ScaleDownSpec> tweak) {
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(names);
        spec.getDrain().setRetries(0);
        tweak.accept(spec);
        scaleDown = new ScaleDown();
        scaleDown.setMetadata(new ObjectMetaBuilder().withName("shrink").withGeneration(1L).withUid("uid-1").build());
        scaleDown.setSpec(spec);
        return scaleDown;
    }

    /** Reconciles as JOSDK would, moving the clock by each asked delay, until the predicate holds. */
    private ScaleDownStatus reconcileUntil(String what, Predicate<ScaleDownStatus> until) {
        return new ReconcileLoop<ScaleDown, ScaleDownStatus>(sd -> reconciler.reconcile(sd, null), clock, () -> { }, this::describe)
                .until(scaleDown, what, until);
    }

    private ScaleDownStatus reconcileToEnd() {
        return reconcileUntil("finished", ScaleDownStatus::finished);
    }

    private String describe() {
        ScaleDownStatus status = scaleDown.getStatus();
        return "phase " + status.getPhase() + ", message " + status.getMessage() + ", conditions " + status.getConditions();
    }

    private Condition condition(String type) {
        return Conditions.find(scaleDown.getStatus().getConditions(), type).orElseThrow(() -> new AssertionError("no " + type + ": " + describe()));
    }

    private long calls(String command) {
        return simulator.calls(command).size();
    }

    /** cks_drain_blocked of the node, as the operator exports it from this status (0 when there is no series). */
    private double drainBlocked(String node) {
        return dev.cks.nodeops.monitoring.StatusSeries.drainsBlocked(List.of(), List.of(scaleDown), clock.instant()).stream()
                .filter(s -> node.equals(s.labels().get("node"))).mapToDouble(dev.cks.nodeops.monitoring.StatusSeries.Sample::value).sum();
    }

    @Test
    void cordonsEveryNodeBeforeDrainingAnyThenRemovesThemWithOneScaleCall() {
        List<String> vmIds = List.copyOf(cluster.vmIds());
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(nodes.calls).containsSubsequence("lock " + W1, "lock " + W2, "cordon " + W1, "cordon " + W2, "drain " + W1, "drain " + W2,
                "delete " + W1, "delete " + W2);
        assertThat(nodes.calls.indexOf("cordon " + W2)).isLessThan(nodes.calls.indexOf("drain " + W1));
        assertThat(calls("scaleKubernetesCluster")).isEqualTo(1);
        assertThat(simulator.calls("scaleKubernetesCluster").get(0).params().get("nodeids")).isEqualTo(vmIds.get(1) + "," + vmIds.get(2));
        assertThat(nodes.nodes()).extracting(n -> n.getMetadata().getName()).containsExactly(CONTROL, W3);
        assertThat(condition(Conditions.SUCCEEDED).getReason()).isEqualTo("Removed");
        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo("Planned");
        assertThat(condition(Conditions.PROGRESSING).getStatus()).isEqualTo("False");
        assertThat(events.reasons()).containsSubsequence(OperationRecorder.ACCEPTED, OperationRecorder.CORDONED, OperationRecorder.CORDONED,
                OperationRecorder.DRAINING, OperationRecorder.NODE_DRAINED, OperationRecorder.DRAINING, OperationRecorder.NODE_DRAINED,
                "AllDrained", "RemovalRequested", "Succeeded");
        assertThat(registry.get("cks.operations").tag("outcome", "Succeeded").counter().count()).isEqualTo(1.0);
    }

    @Test
    void aDrainThatGivesUpRollsBackEveryNodeItCordonedButNotOneCordonedBefore() {
        nodes.add(TestNodes.node(W1).unschedulable().build());
        nodes.thenDrain(W2, (state, now) -> givesUp(state, "Node " + W2 + " still has 1 pod: pdb shop/web: needs 2 healthy, has 2, 0 disruptions allowed"));
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getReason()).isEqualTo("DrainBlocked");
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("node " + W2).contains("pdb shop/web: needs 2 healthy, has 2")
                .contains("uncordoned " + W2);
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(nodes.isCordoned(W1)).as("cordoned before the ScaleDown").isTrue();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(nodes.ours(W2)).isEmpty();
        assertThat(calls("scaleKubernetesCluster")).isZero();
        assertThat(status.getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsExactly(Phase.Drained, Phase.Failed);
        assertThat(events.all()).filteredOn(e -> e.reason().equals("RolledBack")).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo("Warning"));
    }

    @Test
    void aBlockedDrainNamesTheBudgetAndItsNumbersWhileItBlocksAndWarnsOncePerCause() {
        Instant start = clock.instant();
        for (int i = 0; i < 15; i++) {
            nodes.thenDrain(W1, (state, now) -> heldBy(state, now.plusSeconds(1), "shop/web", "needs 3 healthy, has 3, 0 disruptions allowed", 2));
        }
        nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(1), 1));
        nodes.thenDrain(W1, (state, now) -> done(state));
        create(List.of(W1), spec -> { });

        reconcileUntil("held back by the budget", s -> s.getMessage() != null && s.getMessage().contains("held back by pdb shop/web"));
        assertThat(condition(Conditions.PROGRESSING).getMessage()).contains("pdb shop/web: needs 3 healthy, has 3, 0 disruptions allowed");
        assertThat(events.reasons()).doesNotContain(OperationRecorder.DRAIN_BLOCKED);

        ScaleDownStatus blocked = reconcileUntil("blocked", s -> s.getMessage().contains("blocked for"));
        assertThat(Duration.between(start, clock.instant())).isGreaterThanOrEqualTo(DrainTick.BLOCKED_AFTER);
        assertThat(blocked.getMessage()).contains("blocked for").contains("pdb shop/web: needs 3 healthy, has 3, 0 disruptions allowed");
        assertThat(drainBlocked(W1)).isEqualTo(1.0);

        reconcileToEnd();
        assertThat(events.all()).filteredOn(e -> e.reason().equals(OperationRecorder.DRAIN_BLOCKED)).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo("Warning"))
                .satisfies(e -> assertThat(e.message()).contains(W1).contains("pdb shop/web: needs 3 healthy"));
        assertThat(drainBlocked(W1)).isEqualTo(0.0);
        assertThat(scaleDown.getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
    }

    @Test
    void theDeadlinePassingWhileAnotherNodeWaitsToBeDrainedRollsBack() {
        for (int i = 0; i < 100; i++) {
            nodes.thenDrain(W1, (state, now) -> heldBy(state, now.plusSeconds(5), "shop/web", "needs 1 healthy, has 1, 0 disruptions allowed", 1));
        }
        create(List.of(W1, W2), spec -> spec.setTimeoutSeconds(60));

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getReason()).isEqualTo("DeadlinePassed");
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("while node " + W1 + " was draining");
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(calls("scaleKubernetesCluster")).isZero();
    }

    @Test
    void theDeadlinePassingDuringRemovalLetsTheRemovalFinish() {
        simulator.planJob("scaleKubernetesCluster", JobOutcome.succeedsAfterPolls(20));
        create(List.of(W1), spec -> spec.setTimeoutSeconds(30));

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(Duration.between(Instant.parse("2026-11-30T12:00:00Z"), clock.instant())).isGreaterThan(Duration.ofSeconds(30));
        assertThat(calls("scaleKubernetesCluster")).isEqualTo(1);
    }

    @Test
    void aNodeThatCannotBeCordonedRollsBackWhatWasCordoned() {
        nodes.refuseCordon(W2, "Node " + W2 + " could not be cordoned: nodes is forbidden");
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getReason()).isEqualTo("CordonFailed");
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("forbidden");
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
    }

    @Test
    void anApiErrorThatMayPassIsThrownForARetryAndWrittenToStatus() {
        nodes.failCordon(W1, FakeNodeWork.apiDown());
        create(List.of(W1), spec -> { });
        reconcileUntil("cordoning", s -> s.getPhase() == ScaleDownStatus.Phase.Cordoning);

        assertThatThrownBy(() -> reconciler.reconcile(scaleDown, null)).hasMessageContaining("API server is restarting");
        reconciler.updateErrorStatus(scaleDown, null, FakeNodeWork.apiDown());

        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(OperationRecorder.RETRYING);
        assertThat(scaleDown.getStatus().getMessage()).contains("tried again with backoff").contains("API server is restarting");
        assertThat(scaleDown.getStatus().getPhase()).as("a retry changes no phase").isEqualTo(ScaleDownStatus.Phase.Cordoning);
    }

    @Test
    void refusesControlPlaneUnknownLockedNodesAndTheLastWorkerTouchingNothing() {
        nodes.add(TestNodes.node(W3).lockedBy("NodeUpgrade/other").build());
        create(List.of(CONTROL, "prod-node-missing", W3, W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        Condition accepted = condition(Conditions.ACCEPTED);
        assertThat(accepted.getStatus()).isEqualTo("False");
        assertThat(accepted.getReason()).isEqualTo(OperationRecorder.REFUSED);
        assertThat(accepted.getMessage()).contains("Node " + CONTROL + " is a control-plane node").contains("prod-node-missing does not exist")
                .contains("locked by NodeUpgrade/other").contains("would leave no schedulable Ready worker");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon") || c.startsWith("lock"));
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(registry.get("cks.operations").tag("outcome", "Failed").counter().count()).isEqualTo(1.0);
    }

    @Test
    void anInvalidSpecIsRefusedAndCountedLikeAnyRefusal() {
        create(List.of(W1, W1), spec -> { });

        reconcileToEnd();

        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo(OperationRecorder.INVALID_SPEC);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("lists a node twice");
        assertThat(registry.get("cks.operations").tag("outcome", "Failed").counter().count()).isEqualTo(1.0);
        assertThat(nodes.calls).isEmpty();
    }

    @Test
    void preflightFailRefusesBeforeAnyCordonAndWarnSetsTheConditionAndGoesOn() {
        nodes.prediction = blockingPrediction();
        create(List.of(W1), spec -> spec.setPreflight(Preflight.Fail));
        reconcileToEnd();
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("pdb shop/web").contains("Nothing was cordoned");
        assertThat(nodes.calls).containsExactly("preflight " + W1);

        create(List.of(W1), spec -> spec.setPreflight(Preflight.Warn));
        reconcileToEnd();
        assertThat(scaleDown.getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(condition(PreflightGate.CONDITION).getStatus()).isEqualTo("True");
        assertThat(events.all()).anyMatch(e -> e.reason().equals(PreflightGate.CONDITION) && e.type().equals("Warning"));
    }

    private static PreflightPrediction.Report blockingPrediction() {
        var numbers = new dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers("shop", "web", 2, 2, 0, 2);
        return new PreflightPrediction.Report(java.util.Map.of(), List.of(new PreflightPrediction.BudgetPressure(numbers,
                java.util.Map.of(W1, List.of("shop/web-1")), true, null)));
    }

    @Test
    void waitsWhileTheSecretIsMissingAndCarriesOnOnceItIsBack() {
        cloudStack.secretMissing = true;
        create(List.of(W1), spec -> { });

        reconcileUntil("waiting", s -> s.getPhase() == ScaleDownStatus.Phase.Waiting);
        reconciler.reconcile(scaleDown, null);
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(ScaleDownPlanner.CLOUDSTACK_UNAVAILABLE);
        assertThat(condition(Conditions.WAITING).getMessage()).contains("cloudstack-secret does not exist").contains("has not touched any node");
        assertThat(events.all()).filteredOn(e -> e.reason().equals(OperationRecorder.WAITING)).as("one event per cause, not per look").hasSize(1);
        assertThat(nodes.calls).isEmpty();

        cloudStack.secretMissing = false;
        ScaleDownStatus status = reconcileToEnd();
        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(Conditions.find(status.getConditions(), Conditions.WAITING)).as("removed on resume").isEmpty();
    }

    @Test
    void theSecretGoingAwayDuringRemovalMakesItWaitNotFail() {
        create(List.of(W1), spec -> { });
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        cloudStack.secretMissing = true;
        reconciler.reconcile(scaleDown, null);
        assertThat(condition(Conditions.WAITING).getMessage()).contains("removal goes on once it can");

        cloudStack.secretMissing = false;
        assertThat(reconcileToEnd().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(calls("scaleKubernetesCluster")).isEqualTo(1);
    }

    @Test
    void restartedBetweenAskingForTheScaleAndRecordingItsJobItLooksInsteadOfAskingAgain() {
        simulator.planJob("scaleKubernetesCluster", JobOutcome.succeedsAfterPolls(1));
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("scale asked for", s -> s.getRemoval() != null && s.getRemoval().getJobId() != null);
        String intentOnly = store.persisted.stream().filter(json -> json.contains("\"removal\"") && !json.contains("\"jobId\"")).findFirst().orElseThrow();
        // CloudStack runs the job to its end while the operator is down.
        client.queryAsyncJob(scaleDown.getStatus().getRemoval().getJobId());

        scaleDown.setStatus(Serialization.unmarshal(intentOnly, ScaleDownStatus.class));
        restartOperator();
        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(calls("scaleKubernetesCluster")).as("asked once").isEqualTo(1);
        assertThat(nodes.node(W1)).isEmpty();
    }

    @Test
    void restartedAfterRecordingTheIntentButBeforeAskingItIsNotAskedAgainAndSaysWhatToCheck() {
        create(List.of(W1), spec -> { });
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        simulator.injectFault("scaleKubernetesCluster", dev.cks.nodeops.cloudstack.simulator.Fault.droppedConnection());
        reconcileUntil("intent recorded", s -> s.getRemoval() != null);
        String intentOnly = store.last();
        long asked = calls("scaleKubernetesCluster");

        scaleDown.setStatus(Serialization.unmarshal(intentOnly, ScaleDownStatus.class));
        restartOperator();
        ScaleDownStatus status = reconcileToEnd();

        assertThat(calls("scaleKubernetesCluster")).isEqualTo(asked);
        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getMessage()).contains("not asked again").contains("async jobs");
        assertThat(nodes.isCordoned(W1)).isFalse();
    }

    @Test
    void aRemovalFailingPartWayListsWhatWentAndGivesBackWhatStayed() {
        world("ExternalManaged");
        List<String> vmIds = List.copyOf(cluster.vmIds());
        simulator.planJob("destroyVirtualMachine", JobOutcome.succeedsAfterPolls(1), JobOutcome.fails(530, "host is in maintenance"));
        create(List.of(W1, W2), spec -> spec.setRemoval(Removal.DestroyVM));

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getReason()).isEqualTo("RemovalFailed");
        assertThat(condition(Conditions.FAILED).getMessage()).contains("host is in maintenance")
                .contains("Removed VMs: " + vmIds.get(1) + "; still in the cluster: " + vmIds.get(2));
        assertThat(status.getRemoval().getRemovedVmIds()).containsExactly(vmIds.get(1));
        assertThat(status.getRemoval().getRemainingVmIds()).containsExactly(vmIds.get(2));
        assertThat(nodes.calls).as("each Node goes before its VM (kubectl delete node semantics); the kubelet of a VM that stays registers it again")
                .containsSubsequence("delete " + W1, "delete " + W2);
        assertThat(status.getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsExactly(Phase.Removed, Phase.Drained);
        assertThat(calls("destroyVirtualMachine")).isEqualTo(2);
        assertThat(calls("removeVirtualMachinesFromKubernetesCluster")).isZero();
    }

    @Test
    void deletingItBeforeRemovalUncordonsAndUnlocksWhatItHeld() {
        for (int i = 0; i < 10; i++) {
            nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(1), 3));
        }
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining && s.getCurrentNode() != null);

        reconciler.cleanup(scaleDown, null);

        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(nodes.ours(W2)).isEmpty();
    }
}
