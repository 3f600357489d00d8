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
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.drain.PodSelection;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testing.Crash;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.ReconcileLoop;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.SimulatedCloudStack;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.awaitility.Awaitility;

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
        world(clusterType, List.of());
    }

    /** The same, the named workers added with addNodesToKubernetesCluster (external nodes, CloudStack 4.21+). */
    private void world(String clusterType, List<String> external) {
        nodes = new FakeNodeWork();
        cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), clusterType, simulator.addSupportedVersion("1.34.2").id());
        simulator.addClusterVm(cluster, CONTROL, NodeRole.CONTROL);
        nodes.add(TestNodes.node(CONTROL).controlPlane().build());
        for (String worker : List.of(W1, W2, W3)) {
            if (external.contains(worker)) {
                simulator.addExternalNode(cluster, worker);
            } else {
                simulator.addClusterVm(cluster, worker, NodeRole.WORKER);
            }
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

    /**
     * Shape: a CloudManaged CKS cluster, one worker removed. Actor: a person whose ScaleDown (written for the last release)
     * still selects the pods to drain with the deprecated spec.drain.podSelector: it runs as before, with one Warning event
     * that spells out the same requirements as spec.drain.selector, and the Accepted condition says it too.
     */
    @Test
    void theDeprecatedPodSelectorStillDrainsWithAWarningThatSpellsOutTheMove() {
        create(List.of(W1), spec -> spec.getDrain().setPodSelector("app in (web,api)"));

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        String move = "Write spec.drain.selector: {matchExpressions: [{key: app, operator: In, values: [api, web]}]} instead";
        assertThat(events.all()).filteredOn(e -> e.reason().equals(PodSelection.DEPRECATED_POD_SELECTOR)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).startsWith("ScaleDown shrink selects the pods to drain with spec.drain.podSelector 'app in (web,api)'")
                    .contains(move);
        });
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains(move);
    }

    /**
     * ScaleDown keeps its nodes' drains by the rule NodeUpgrade keeps them (docs/upgrade.md, "What status keeps"):
     * two workers, drains scripted to evict one pod each; no other actor.
     */
    @Test
    void aDrainedNodeKeepsOnlyHowManyPodsItsDrainEvictedWhileTheNodeDrainingKeepsThePodsStillLeaving() {
        for (String worker : List.of(W1, W2)) {
            nodes.thenDrain(worker, (state, now) -> {
                state.getPodsSeen().add("uid-" + worker);
                state.setPodsEvicted(1);
                state.getLastEvicted().add("shop/web-" + worker);
                state.getWorkloads().add("Deployment shop/web");
                return moving(state, now.plusSeconds(worker.equals(W1) ? 1 : 600), 1);
            });
        }
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileUntil("W1 drained, W2 draining", s -> s.getNodes().stream().anyMatch(n -> n.getName().equals(W2)
                && n.getPhase() == ScaleDownNodeStatus.Phase.Draining && n.getDrain().getAttempt() != null));

        ScaleDownNodeStatus drained = status.getNodes().stream().filter(n -> n.getName().equals(W1)).findFirst().orElseThrow();
        ScaleDownNodeStatus draining = status.getNodes().stream().filter(n -> n.getName().equals(W2)).findFirst().orElseThrow();
        assertThat(drained.getPhase()).isEqualTo(ScaleDownNodeStatus.Phase.Drained);
        assertThat(drained.getDrain().getPodsEvicted()).isEqualTo(1);
        assertThat(drained.getDrain().getPodsSeen()).isEmpty();
        assertThat(drained.getDrain().getWorkloads()).isEmpty();
        assertThat(drained.getDrain().getLastEvicted()).isEmpty();
        assertThat(draining.getDrain().getPodsSeen()).containsExactly("uid-" + W2);
        assertThat(draining.getDrain().getLastEvicted()).containsExactly("shop/web-" + W2);
        assertThat(events.all()).anySatisfy(e -> assertThat(e.message()).isEqualTo("Drained node " + W1 + ": 1 pod(s) evicted, of Deployment shop/web."));
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
        assertThat(events.onNode(W2)).as("the node tells who cordoned it, why, and that the rollback gave it back")
                .extracting(RecordingEvents.NodeEvent::reason).containsExactly(OperationRecorder.CORDONED, OperationRecorder.DRAINING,
                        OperationRecorder.UNCORDONED);
        assertThat(events.onNode(W2).get(0).message()).isEqualTo("ScaleDown " + scaleDown.getMetadata().getName() + ": Cordoned node " + W2
                + " to remove it from the cluster.");
        assertThat(events.onNode(W1)).extracting(RecordingEvents.NodeEvent::reason).as("cordoned before: never uncordoned")
                .doesNotContain(OperationRecorder.UNCORDONED);
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
        assertThat(events.onNode(W1)).filteredOn(e -> e.reason().equals(OperationRecorder.DRAIN_BLOCKED)).as("on the node too").singleElement()
                .satisfies(e -> assertThat(e.message()).contains("pdb shop/web: needs 3 healthy"));
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

    /**
     * Shape: one CKS cluster. Actor: CloudStack, unreachable once every node is drained. Before, the ScaleDown
     * waited in Removing past its deadline with every node cordoned, as long as CloudStack stayed away.
     */
    @Test
    void theDeadlinePassingBeforeAnyRemovalWasSentRollsBack() {
        create(List.of(W1), spec -> spec.setTimeoutSeconds(120));
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        cloudStack.close();

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getReason()).isEqualTo("DeadlinePassed");
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("before CloudStack was asked").contains("Nothing was removed");
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.node(W1)).isPresent();
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

    /** Why CloudStack cannot be asked before anything is touched, the wait's reason and its event's type. */
    enum CloudStackUnasked {
        SECRET_MISSING(CloudStackWait.UNAVAILABLE, "cloudstack-secret does not exist", "Normal"),
        // Waiting alone does not fix rejected keys: a person must, so it is a Warning.
        KEYS_REJECTED(CloudStackWait.CREDENTIALS_REJECTED, "errorcode 401", "Warning");

        final String reason;
        final String cause;
        final String eventType;

        CloudStackUnasked(String reason, String cause, String eventType) {
            this.reason = reason;
            this.cause = cause;
            this.eventType = eventType;
        }

        void happen(SimulatedCloudStack cloudStack, boolean now) {
            if (this == SECRET_MISSING) {
                cloudStack.secretMissing = now;
            } else {
                cloudStack.keysRejected = now;
            }
        }
    }

    @ParameterizedTest
    @EnumSource(CloudStackUnasked.class)
    void waitsWhileCloudStackCannotBeAskedAnnouncesItOnceAndCarriesOnOnceItCan(CloudStackUnasked unasked) {
        unasked.happen(cloudStack, true);
        create(List.of(W1), spec -> { });

        reconcileUntil("waiting", s -> s.getPhase() == ScaleDownStatus.Phase.Waiting);
        reconciler.reconcile(scaleDown, null);
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(unasked.reason);
        assertThat(condition(Conditions.WAITING).getMessage()).contains(unasked.cause).contains("has not touched any node");
        assertThat(events.all()).filteredOn(e -> e.reason().equals(unasked.reason)).as("one event per cause, not per look")
                .singleElement().extracting(RecordingEvents.RecordedEvent::type).isEqualTo(unasked.eventType);
        assertThat(nodes.calls).isEmpty();

        unasked.happen(cloudStack, false);
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
    void aScaleThatNeverReachedCloudStackIsSentAgainOnlyOnceCloudStackCouldNoLongerTakeIt() {
        create(List.of(W1), spec -> { });
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        simulator.injectFault("scaleKubernetesCluster", dev.cks.nodeops.cloudstack.simulator.Fault.droppedConnection());
        reconcileUntil("request sent", s -> s.getRemoval() != null && s.getRemoval().getRequestedAt() != null);
        Instant sent = clock.instant();
        scaleDown.setStatus(Serialization.unmarshal(store.last(), ScaleDownStatus.class));
        restartOperator();

        reconcileUntil("looking", s -> condition(Conditions.WAITING).getReason().equals(dev.cks.nodeops.operation.CloudStackWrite.ANSWER_LOST));
        assertThat(condition(Conditions.WAITING).getMessage()).contains("could still reach it until");
        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(calls("scaleKubernetesCluster")).as("the dropped request and the one sent again").isEqualTo(2);
        assertThat(simulator.jobCommands()).as("CloudStack ran one scale").containsOnlyOnce("scaleKubernetesCluster");
        assertThat(events.reasons()).contains("RequestResent");
        assertThat(Duration.between(sent, clock.instant())).as("not before the request's signature expired")
                .isGreaterThan(client.settings().unansweredWriteWindow());
        assertThat(nodes.node(W1)).isEmpty();
    }

    /**
     * Shape: a project cluster whose keys CloudStack restricts to the Kubernetes Service User role (its own
     * cloudstack-secret: no listApis, no listAsyncJobs). Actor: a proxy that loses CloudStack's answer to the scale
     * after CloudStack took it; CloudStack's scale job runs 15 minutes, past the request's signature window.
     */
    @Test
    void withAProjectClustersOwnKeysALostScaleAnswerIsFollowedByTheClustersStateWithoutListingJobs() {
        simulator.playProjectKubernetesServiceRole(simulator.defaultAccount());
        simulator.planJob("scaleKubernetesCluster", new JobOutcome.SucceedsAfter(Duration.ofMinutes(15)));
        create(List.of(W1), spec -> { });
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        simulator.injectFault("scaleKubernetesCluster", Fault.actsThenBadGateway());

        reconcileUntil("waiting on the busy cluster", s -> condition(Conditions.WAITING).getMessage().contains("the cluster is Scaling"));
        assertThat(condition(Conditions.WAITING).getMessage()).contains("may not list CloudStack's jobs").contains("Nothing is sent again");
        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(simulator.calls("scaleKubernetesCluster")).as("the preflight's probe without parameters, then the scale sent once: "
                + "never again while the cluster was Scaling, past the window too").extracting(call -> call.params().containsKey("nodeids"))
                .containsExactly(false, true);
        assertThat(simulator.calls("listAsyncJobs")).as("only whether the keys may (a probe without parameters, at most every 10 min): "
                + "the jobs were never searched").isNotEmpty().allSatisfy(call -> assertThat(call.params()).doesNotContainKey("startdate"));
        assertThat(simulator.jobCommands()).containsOnlyOnce("scaleKubernetesCluster");
        assertThat(events.reasons()).doesNotContain("RequestResent");
        assertThat(nodes.node(W1)).isEmpty();
    }

    /** Shape: a project cluster whose keys CloudStack restricts to the Kubernetes Service User role; an ExternalManaged removal needs more. */
    @Test
    void withAProjectClustersOwnKeysADestroyVmScaleDownIsRefusedBeforeAnyCordon() {
        world("ExternalManaged");
        simulator.playProjectKubernetesServiceRole(simulator.defaultAccount());
        create(List.of(W1), spec -> spec.setRemoval(Removal.DestroyVM));

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo(OperationRecorder.REFUSED);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("destroyVirtualMachine (destroys each drained node's VM)")
                .contains("removeVirtualMachinesFromKubernetesCluster").contains("Nothing was cordoned").contains("cloudstack.secretName");
        assertThat(nodes.calls).noneMatch(call -> call.startsWith("cordon") || call.startsWith("lock"));
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
                .contains("Removed VMs: " + vmIds.get(1) + "; not removed: " + vmIds.get(2));
        assertThat(status.getRemoval().getRemovedVmIds()).containsExactly(vmIds.get(1));
        assertThat(status.getRemoval().getRemainingVmIds()).containsExactly(vmIds.get(2));
        assertThat(nodes.calls).as("each Node goes before its VM (kubectl delete node semantics); the kubelet of a VM that stays registers it again")
                .containsSubsequence("delete " + W1, "delete " + W2);
        assertThat(status.getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsExactly(Phase.Removed, Phase.Drained);
        assertThat(calls("destroyVirtualMachine")).isEqualTo(2);
        assertThat(calls("removeVirtualMachinesFromKubernetesCluster")).as("each VM leaves the map before it is destroyed").isEqualTo(2);
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

    /**
     * Shape: a CKS cluster of a control-plane node and three workers. Actor: a person upgrading the operator in place while a
     * ScaleDown of two workers drains, then deleting it. The older operator stored status.targetNodes as the text "w1,w2"; the
     * new one reads each node from it and gives both back (read as one name, it would have released neither, both left cordoned).
     */
    @Test
    void deletedAfterAnOperatorUpgradeItGivesBackEachNodeTheOlderOperatorRecordedAsText() {
        for (int i = 0; i < 10; i++) {
            nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(1), 3));
        }
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining && s.getCurrentNode() != null);
        assertThat(nodes.isCordoned(W1) && nodes.isCordoned(W2)).isTrue();

        scaleDown = asAnOlderOperatorStoredIt(scaleDown);
        reconciler.cleanup(scaleDown, null);

        assertThat(store.replaced).as("replaced before anything is applied over it").isEqualTo(1);

        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(nodes.ours(W2)).isEmpty();
    }

    /** As {@link #deletedAfterAnOperatorUpgradeItGivesBackEachNodeTheOlderOperatorRecordedAsText}, but left to run: it removes exactly those two. */
    @Test
    void resumedAfterAnOperatorUpgradeItRemovesExactlyTheNodesTheOlderOperatorRecordedAsText() {
        List<String> vmIds = List.copyOf(cluster.vmIds());
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining);

        scaleDown = asAnOlderOperatorStoredIt(scaleDown);
        restartOperator();
        ScaleDownStatus status = reconcileToEnd();

        assertThat(store.replaced).as("once, in the first reconcile").isEqualTo(1);
        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(status.getTargetNodes()).containsExactly(W1, W2);
        assertThat(simulator.calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.params().get("nodeids")).isEqualTo(vmIds.get(1) + "," + vmIds.get(2)));
        assertThat(nodes.nodes()).extracting(n -> n.getMetadata().getName()).containsExactly(CONTROL, W3);
    }

    /** The ScaleDown as the API server hands it to an upgraded operator when an operator before 0.3.0 wrote its status. */
    @SuppressWarnings("unchecked")
    private static ScaleDown asAnOlderOperatorStoredIt(ScaleDown current) {
        Map<String, Object> stored = Serialization.unmarshal(Serialization.asJson(current), Map.class);
        Map<String, Object> status = (Map<String, Object>) stored.get("status");
        status.put("targetNodes", String.join(",", (List<String>) status.get("targetNodes")));
        return Serialization.unmarshal(Serialization.asJson(stored), ScaleDown.class);
    }

    // ---- Crash safety: a kill at every side-effect/status boundary ------------------------------------------

    /** What a ScaleDown meets on its way, and so where it ends. */
    enum Scenario { SCALE, REMOVE_NODES, DESTROY_VM, ROLLBACK, SCALE_FAILS, DELETED }

    static Stream<Arguments> killPoints() {
        return Stream.of(
                Arguments.of(KillPoint.SCALEDOWN_LOCKED, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_CORDONED, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_CORDONED, 2, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_DRAIN_STEP, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_DRAIN_STEP, 2, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_SCALE_INTENT, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_SCALE_ANSWERED, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_SCALE_DONE, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_NODE_DELETED, 1, Scenario.SCALE),
                Arguments.of(KillPoint.SCALEDOWN_REMOVE_NODES_INTENT, 1, Scenario.REMOVE_NODES),
                Arguments.of(KillPoint.SCALEDOWN_REMOVE_NODES_ANSWERED, 1, Scenario.REMOVE_NODES),
                Arguments.of(KillPoint.SCALEDOWN_REMOVE_NODES_DONE, 1, Scenario.REMOVE_NODES),
                Arguments.of(KillPoint.SCALEDOWN_NODE_DELETED, 1, Scenario.REMOVE_NODES),
                Arguments.of(KillPoint.SCALEDOWN_NODE_DELETED, 2, Scenario.REMOVE_NODES),
                Arguments.of(KillPoint.SCALEDOWN_DESTROY_NODE_DELETED, 1, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_UNMAP_ANSWERED, 1, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_UNMAP_ANSWERED, 2, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_DESTROY_INTENT, 1, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_DESTROY_ANSWERED, 1, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_DESTROY_ANSWERED, 2, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_DESTROY_DONE, 1, Scenario.DESTROY_VM),
                Arguments.of(KillPoint.SCALEDOWN_ROLLBACK_RELEASED, 1, Scenario.ROLLBACK),
                Arguments.of(KillPoint.SCALEDOWN_FAILED_RELEASED, 1, Scenario.SCALE_FAILS),
                Arguments.of(KillPoint.SCALEDOWN_DELETED_RELEASED, 1, Scenario.DELETED));
    }

    /**
     * The operator halts right after a side effect, before its record; a new one starts from the status the
     * API server holds. The operation ends as it would have, every CloudStack write was executed once, and no
     * node is left with this operator's cordon or lock.
     */
    @ParameterizedTest(name = "{0} #{1} ({2})")
    @MethodSource("killPoints")
    @ResourceLock(Crash.ARMED_POINT)
    void killedRightAfterASideEffectARestartedOperatorFinishesCorrectly(KillPoint point, int nth, Scenario scenario) throws Exception {
        if (scenario == Scenario.DESTROY_VM) {
            world("ExternalManaged");
        }
        if (scenario == Scenario.REMOVE_NODES) {
            world("CloudManaged", List.of(W1, W2));
        }
        // CloudStack's jobs take a while and run to their end whether or not the operator is there to poll them.
        simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(Duration.ofSeconds(4)));
        if (scenario == Scenario.ROLLBACK) {
            nodes.thenDrain(W2, (state, now) -> givesUp(state, "Node " + W2 + " still has 1 pod: pdb shop/web: needs 2 healthy, has 2"));
        }
        if (scenario == Scenario.SCALE_FAILS) {
            simulator.planJob("scaleKubernetesCluster", JobOutcome.fails(530, "Failed to scale Kubernetes cluster prod: node drain failed"));
        }
        if (scenario == Scenario.DELETED) {
            for (int i = 0; i < 5; i++) {
                nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(1), 2));
            }
        }
        create(List.of(W1, W2), spec -> spec.setRemoval(scenario == Scenario.DESTROY_VM ? Removal.DestroyVM : Removal.CloudStackScale));

        try (Crash crash = Crash.at(point, nth)) {
            ReconcileLoop<ScaleDown, ScaleDownStatus> loop = new ReconcileLoop<>(
                    sd -> crash.reconcile(sd, r -> reconciler.reconcile(r, null), store, ScaleDownStatus.class, this::restartOperator),
                    clock, () -> { }, this::describe);
            if (scenario == Scenario.DELETED) {
                loop.until(scaleDown, "draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining);
                deleteAcrossACrash(crash);
            } else {
                ScaleDownStatus status = loop.until(scaleDown, "finished", ScaleDownStatus::finished);
                assertThat(status.getPhase()).as(describe()).isEqualTo(switch (scenario) {
                    case SCALE, REMOVE_NODES, DESTROY_VM -> ScaleDownStatus.Phase.Succeeded;
                    case ROLLBACK -> ScaleDownStatus.Phase.RolledBack;
                    default -> ScaleDownStatus.Phase.Failed;
                });
            }
            assertThat(crash.happened()).as("the operator was halted at " + point.pointName()).isTrue();
        }

        for (String command : List.of("scaleKubernetesCluster", "removeNodesFromKubernetesCluster", "destroyVirtualMachine")) {
            assertThat(simulator.jobCommands().stream().filter(command::equals).count()).as("CloudStack ran each " + command + " once")
                    .isEqualTo(switch (scenario) {
                        case SCALE, SCALE_FAILS -> command.equals("scaleKubernetesCluster") ? 1L : 0L;
                        case REMOVE_NODES -> command.equals("removeNodesFromKubernetesCluster") ? 1L : 0L;
                        case DESTROY_VM -> command.equals("destroyVirtualMachine") ? 2L : 0L;
                        default -> 0L;
                    });
        }
        assertThat(calls("scaleKubernetesCluster") + calls("removeNodesFromKubernetesCluster") + calls("destroyVirtualMachine"))
                .as("no write sent twice").isEqualTo(simulator.jobCommands().size());
        if (scenario == Scenario.REMOVE_NODES) {
            assertThat(simulator.clusterVms(cluster.id())).extracting(vm -> vm.name()).containsExactlyInAnyOrder(CONTROL, W3);
            assertThat(nodes.node(W1)).isEmpty();
            assertThat(nodes.node(W2)).isEmpty();
            assertThat(scaleDown.getStatus().getRemoval().getCommand()).isEqualTo(ScaleDownStatus.RemovalCommand.removeNodesFromKubernetesCluster);
        }
        assertThat(calls("removeVirtualMachinesFromKubernetesCluster")).isEqualTo(scenario == Scenario.DESTROY_VM ? 2 : 0);
        for (Node node : nodes.nodes()) {
            assertThat(nodes.ours(node.getMetadata().getName())).as("our cordon or lock left on " + node.getMetadata().getName()).isEmpty();
            assertThat(nodes.isCordoned(node.getMetadata().getName())).as(node.getMetadata().getName() + " left cordoned").isFalse();
        }
        if (scenario == Scenario.SCALE_FAILS) {
            assertThat(condition(Conditions.FAILED).getMessage()).contains("Removed VMs: none");
        }
    }

    /** JOSDK calls cleanup until it lets the finalizer go; a crash in it means a new operator calls it again. */
    private void deleteAcrossACrash(Crash crash) {
        for (int attempt = 0; attempt < 5; attempt++) {
            Optional<DeleteControl> control = crash.call(() -> reconciler.cleanup(scaleDown, null), () -> {
                scaleDown.setStatus(store.durable(ScaleDownStatus.class));
                restartOperator();
            });
            if (control.isPresent() && control.get().isRemoveFinalizer()) {
                return;
            }
            clock.advance(Duration.ofMillis(control.flatMap(DeleteControl::getScheduleDelay).orElse(200L)));
        }
        throw new AssertionError("the finalizer was never removed: " + describe());
    }

    @Test
    void deletedDuringRemovalItFinishesTheRemovalBeforeLettingGo() {
        simulator.planJob("scaleKubernetesCluster", new JobOutcome.SucceedsAfter(Duration.ofSeconds(30)));
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("scale asked for", s -> s.getRemoval() != null && s.getRemoval().getJobId() != null);

        DeleteControl first = reconciler.cleanup(scaleDown, null);
        assertThat(first.isRemoveFinalizer()).as("kept while CloudStack removes the VMs").isFalse();
        DeleteControl control = first;
        for (int i = 0; i < 50 && !control.isRemoveFinalizer(); i++) {
            clock.advance(Duration.ofMillis(control.getScheduleDelay().orElse(1000L)));
            control = reconciler.cleanup(scaleDown, null);
        }

        assertThat(control.isRemoveFinalizer()).isTrue();
        assertThat(scaleDown.getStatus().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(store.durable(ScaleDownStatus.class).getPhase()).as("the outcome was written before the finalizer went").isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(nodes.node(W1)).isEmpty();
        assertThat(nodes.node(W2)).isEmpty();
        assertThat(calls("scaleKubernetesCluster")).isEqualTo(1);
    }

    @Test
    void aNodeUncordonedBehindItsBackDuringTheDrainsIsNeverRemoved() {
        nodes.thenDrain(W2, (state, now) -> {
            // Someone runs `kubectl uncordon` on W1 while W2 drains.
            nodes.get(W1).getSpec().setUnschedulable(null);
            nodes.get(W1).getMetadata().getAnnotations().remove(dev.cks.nodeops.common.NodeAnnotations.CORDONED_BY);
            return done(state);
        });
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getReason()).isEqualTo("NodeUncordoned");
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("Node " + W1 + " is no longer cordoned by this ScaleDown");
        assertThat(calls("scaleKubernetesCluster")).isZero();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(nodes.ours(W2)).isEmpty();
    }

    // ---- Fault matrix: every CloudStack write of a ScaleDown against every way its answer can go wrong ----------

    enum Write {
        SCALE("scaleKubernetesCluster", Removal.CloudStackScale),
        REMOVE_NODES("removeNodesFromKubernetesCluster", Removal.CloudStackScale),
        DESTROY("destroyVirtualMachine", Removal.DestroyVM),
        UNMAP("removeVirtualMachinesFromKubernetesCluster", Removal.DestroyVM),
        JOB_POLLING("queryAsyncJobResult", Removal.CloudStackScale);

        final String command;
        final Removal removal;

        Write(String command, Removal removal) {
            this.command = command;
            this.removal = removal;
        }

        boolean hasJob() {
            return this == SCALE || this == REMOVE_NODES || this == DESTROY;
        }
    }

    enum Failure { SERVER_ERROR_BEFORE_ACTING, TIMEOUT_AFTER_ACTING, BAD_GATEWAY_AFTER_ACTING, TRUNCATED_AFTER_ACTING, THROTTLED, DROPPED_CONNECTION,
        JOB_FAILS, JOB_NEVER_ENDS }

    static Stream<Arguments> faultMatrix() {
        return Stream.of(Write.values()).flatMap(write -> Stream.of(Failure.values())
                .filter(failure -> write.hasJob() || failure != Failure.JOB_FAILS && failure != Failure.JOB_NEVER_ENDS)
                .map(failure -> Arguments.of(write, failure)));
    }

    @ParameterizedTest(name = "{0} × {1}")
    @MethodSource("faultMatrix")
    // Each case has its own simulator, clock and fakes (a test instance per case) and waits in real time for late
    // answers: the cases overlap their waits (surefire's junit.jupiter.execution.parallel settings, pom.xml), never
    // while a kill-point test has a point armed, which any reconciler of the JVM would reach.
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock(value = Crash.ARMED_POINT, mode = ResourceAccessMode.READ)
    void everyCloudStackWriteEndsRightWhateverHappensToItsAnswer(Write write, Failure failure) {
        if (write.removal == Removal.DestroyVM) {
            world("ExternalManaged");
        }
        if (write == Write.REMOVE_NODES) {
            world("CloudManaged", List.of(W1, W2));
        }
        List<String> vmIds = List.of(cluster.vmIds().get(1), cluster.vmIds().get(2));
        simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(Duration.ofSeconds(4)));
        create(List.of(W1, W2), spec -> spec.setRemoval(write.removal));
        reconcileUntil("removing", s -> s.getPhase() == ScaleDownStatus.Phase.Removing);
        // A read is tried up to four times by the client: polling meets the fault on every try of one reconcile.
        int times = write == Write.JOB_POLLING ? 4 : 1;
        for (int i = 0; i < times; i++) {
            switch (failure) {
                case SERVER_ERROR_BEFORE_ACTING -> simulator.injectFault(write.command, Fault.serverError());
                case TIMEOUT_AFTER_ACTING -> simulator.injectFault(write.command, Fault.slow(SimulatedCloudStack.READ_TIMEOUT.plusSeconds(1)));
                case BAD_GATEWAY_AFTER_ACTING -> simulator.injectFault(write.command, Fault.actsThenBadGateway());
                case TRUNCATED_AFTER_ACTING -> simulator.injectFault(write.command, Fault.actsThenTruncated());
                case THROTTLED -> simulator.injectFault(write.command, Fault.throttled());
                case DROPPED_CONNECTION -> simulator.injectFault(write.command, Fault.droppedConnection());
                case JOB_FAILS -> simulator.planJob(write.command, JobOutcome.fails(530, "Failed to " + write.command + ": hypervisor host unreachable"));
                case JOB_NEVER_ENDS -> simulator.planJob(write.command, JobOutcome.neverFinishes());
            }
        }
        Instant start = clock.instant();
        // A slow answer is being worked on by CloudStack after the client gave up: the world goes on only once it has acted.
        ReconcileLoop<ScaleDown, ScaleDownStatus> loop = new ReconcileLoop<>(sd -> reconciler.reconcile(sd, null), clock,
                () -> Awaitility.await().pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(20)).until(() -> simulator.requestsInFlight() == 0),
                this::describe);

        if (failure == Failure.JOB_NEVER_ENDS) {
            ScaleDownStatus status = loop.until(scaleDown, "2 hours on", s -> Duration.between(start, clock.instant()).toHours() >= 2);
            assertThat(status.getPhase()).as("nothing is assumed while CloudStack's job runs").isEqualTo(ScaleDownStatus.Phase.Removing);
            assertThat(condition(Conditions.PROGRESSING).getMessage()).contains("pending for").contains("Nothing is assumed until it ends");
            assertThat(nodes.isCordoned(W2)).as("a node whose VM may be going is never uncordoned").isTrue();
            assertThat(simulator.jobCommands().stream().filter(write.command::equals).count()).isEqualTo(1);
            return;
        }
        ScaleDownStatus status = loop.until(scaleDown, "finished", ScaleDownStatus::finished);

        if (failure == Failure.JOB_FAILS) {
            assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
            assertThat(condition(Conditions.FAILED).getMessage()).contains("hypervisor host unreachable").contains("Removed VMs: none")
                    .contains("not removed: " + String.join(", ", vmIds));
            assertThat(nodes.isCordoned(W2)).isFalse();
            assertThat(nodes.ours(W2)).isEmpty();
        } else {
            assertThat(status.getPhase()).as(describe()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
            assertThat(status.getRemoval().getRemovedVmIds()).containsExactlyInAnyOrderElementsOf(vmIds);
            assertThat(nodes.node(W1)).isEmpty();
            assertThat(nodes.node(W2)).isEmpty();
        }
        long jobs = simulator.jobCommands().stream().filter(command -> !command.equals("queryAsyncJobResult")).count();
        assertThat(jobs).as("CloudStack ran each write once").isEqualTo(write.removal == Removal.DestroyVM
                ? (failure == Failure.JOB_FAILS ? 1 : 2) : 1);
        if (failure != Failure.JOB_FAILS) {
            assertThat(simulator.clusterVms(cluster.id())).extracting(vm -> vm.id()).doesNotContainAnyElementsOf(vmIds);
        }
        if (write == Write.UNMAP) {
            assertThat(calls(write.command)).as("dropped from the map once each, or asked again only while CloudStack still maps it")
                    .isBetween(2L, 3L);
        }
        if (write == Write.REMOVE_NODES) {
            assertThat(vmIds).as("removeNodesFromKubernetesCluster keeps the VMs").allSatisfy(id -> assertThat(simulator.findVm(id)).isPresent());
            assertThat(calls("scaleKubernetesCluster")).isZero();
        }
        assertThat(events.all()).noneMatch(event -> event.message().contains("Removed VMs: none") && failure != Failure.JOB_FAILS);
    }

    // ---- External nodes (CloudStack 4.21+) ------------------------------------------------------------------

    @Test
    void externalNodesAreRemovedWithRemoveNodesAndTheirVmsStay() {
        world("CloudManaged", List.of(W1, W2));
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(status.getRemoval().getCommand()).isEqualTo(ScaleDownStatus.RemovalCommand.removeNodesFromKubernetesCluster);
        assertThat(simulator.calls("removeNodesFromKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids").split(",")).containsExactlyInAnyOrderElementsOf(status.getRemoval().getRemovedVmIds()));
        assertThat(calls("scaleKubernetesCluster")).isZero();
        assertThat(status.getRemoval().getRemovedVmIds()).allSatisfy(id -> assertThat(simulator.findVm(id)).as("the VM stays").isPresent());
        assertThat(condition(Conditions.SUCCEEDED).getMessage()).contains("their VMs stay");
        assertThat(nodes.node(W1)).isEmpty();
        assertThat(nodes.node(W2)).isEmpty();
    }

    @Test
    void externalAndCloudStackCreatedNodesTogetherAreRefusedBeforeAnyCordon() {
        world("CloudManaged", List.of(W1));
        create(List.of(W1, W2), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getStatus()).isEqualTo("False");
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("Nodes " + W1 + " were added").contains("nodes " + W2 + " were created by CloudStack")
                .contains("separate ScaleDowns");
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(nodes.ours(W2)).isEmpty();
        assertThat(simulator.jobCommands()).isEmpty();
    }

    @Test
    void aRemovalWhoseTargetsCloudStackNowListsAsAMixAsksNothingAndGivesTheNodesBack() {
        world("CloudManaged", List.of(W1));
        // Planned while CloudStack listed W1 as created by it (as before 4.21 marked it): both went by one scale.
        simulator.setExternalNode(cluster.vmIds().get(1), false);
        create(List.of(W1, W2), spec -> { });
        reconcileUntil("draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining);
        simulator.setExternalNode(cluster.vmIds().get(1), true);

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getMessage()).contains("as external nodes and others not").contains("Removed VMs: none");
        assertThat(simulator.jobCommands()).isEmpty();
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.ours(W2)).isEmpty();
    }

    // ---- Locks: keyed by the owner's uid, reclaimed from operations that are gone; two ScaleDowns at once ------

    @Test
    void aNodeLockedAndCordonedByAScaleDownThatIsGoneIsTakenOverAndRemoved() {
        String gone = "ScaleDown/shrink/uid-deleted";
        nodes.add(TestNodes.node(W1).unschedulable().annotation(dev.cks.nodeops.common.NodeAnnotations.LOCK, gone)
                .annotation(dev.cks.nodeops.common.NodeAnnotations.CORDONED_BY, gone).build());
        nodes.goneOwners.add(gone);
        create(List.of(W1), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(events.all()).filteredOn(e -> e.reason().equals(ScaleDownReconciler.LOCK_RECLAIMED)).singleElement()
                .satisfies(e -> assertThat(e.message()).contains("from ScaleDown/shrink,"));
        assertThat(nodes.node(W1)).isEmpty();
    }

    @Test
    void aScaleDownReCreatedUnderTheSameNameDoesNotTakeTheOldOnesNodesForItsOwn() {
        String before = "ScaleDown/shrink/uid-0";
        nodes.add(TestNodes.node(W1).annotation(dev.cks.nodeops.common.NodeAnnotations.LOCK, before).build());
        create(List.of(W1), spec -> { });

        ScaleDownStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as("the earlier shrink still exists and holds W1").isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("Node " + W1 + " is locked by ScaleDown/shrink");
        assertThat(nodes.get(W1).getMetadata().getAnnotations()).containsEntry(dev.cks.nodeops.common.NodeAnnotations.LOCK, before);
    }

    @Test
    void twoScaleDownsPlannedAtTheSameMomentNeverLeaveTheClusterWithoutAWorker() {
        // Three workers; A removes W1 and W2, B removes W3; both plan before either has locked anything.
        ScaleDown a = create(List.of(W1, W2), spec -> { });
        ScaleDown b = new ScaleDown();
        b.setMetadata(new ObjectMetaBuilder().withName("shrink-b").withGeneration(1L).withUid("uid-b").build());
        ScaleDownSpec bSpec = new ScaleDownSpec();
        bSpec.setNodeNames(List.of(W3));
        b.setSpec(bSpec);
        ScaleDownReconciler other = reconciler;
        restartOperator();
        ScaleDownReconciler second = reconciler;
        boolean[] interleaved = {false};
        nodes.beforeLock = node -> {
            if (node.equals(W2) && !interleaved[0]) {
                interleaved[0] = true;
                second.reconcile(b, null);
            }
        };

        other.reconcile(a, null);

        List<ScaleDown> both = List.of(a, b);
        assertThat(both).filteredOn(sd -> sd.getStatus().getPhase() == ScaleDownStatus.Phase.Failed).singleElement()
                .satisfies(refused -> assertThat(Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED).orElseThrow().getMessage())
                        .contains("would leave no schedulable Ready worker").contains("locked by ScaleDown/shrink-b"));
        assertThat(both).filteredOn(sd -> sd.getStatus().getPhase() == ScaleDownStatus.Phase.Cordoning).hasSize(1);
        assertThat(nodes.get(W1).getMetadata().getAnnotations()).as("the refused one let go of its locks")
                .doesNotContainKey(dev.cks.nodeops.common.NodeAnnotations.LOCK);
    }
}
