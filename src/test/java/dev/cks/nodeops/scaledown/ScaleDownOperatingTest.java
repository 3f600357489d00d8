package dev.cks.nodeops.scaledown;

import static dev.cks.nodeops.testing.TestWindows.window;
import static dev.cks.nodeops.testing.FakeNodeWork.moving;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.operation.MaintenanceWindow.Day;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.ReconcileLoop;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.SimulatedCloudStack;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** How a ScaleDown is operated: its window, pause and resume, and nodes that opt out; on fakes, CloudStack the simulator. */
class ScaleDownOperatingTest {
    private static final String CONTROL = "prod-control-a1";
    private static final String W1 = "prod-node-b1";
    private static final String W2 = "prod-node-b2";
    private static final String W3 = "prod-node-b3";
    /** Monday 2026-11-30, 12:00 UTC. */
    private static final Instant MONDAY_NOON = Instant.parse("2026-11-30T12:00:00Z");

    private final ManualTime clock = new ManualTime(MONDAY_NOON);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SimulatedCloudStack cloudStack = new SimulatedCloudStack(clock, registry);
    private final CloudStackSimulator simulator = cloudStack.simulator;
    private final FakeNodeWork nodes = new FakeNodeWork();
    private final RecordingEvents events = new RecordingEvents();
    private final SimulatedCluster cluster;
    private final java.util.Map<String, String> vmIds = new java.util.HashMap<>();
    private final ScaleDownReconciler reconciler;
    private ScaleDown scaleDown;

    ScaleDownOperatingTest() {
        cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), "CloudManaged", simulator.addSupportedVersion("1.34.2").id());
        simulator.addClusterVm(cluster, CONTROL, NodeRole.CONTROL);
        nodes.add(TestNodes.node(CONTROL).controlPlane().build());
        for (String worker : List.of(W1, W2, W3)) {
            vmIds.put(worker, simulator.addClusterVm(cluster, worker, NodeRole.WORKER).id());
            nodes.add(TestNodes.node(worker).build());
        }
        OperationRecorder recorder = new OperationRecorder(ScaleDownReconciler.KIND, events, new OperationMetrics(registry));
        reconciler = new ScaleDownReconciler(clock, cloudStack.access(cluster.id()), new TestSettings(),
                new OperationPorts(nodes, recorder, new RecordingStatusStore()));
    }

    @AfterEach
    void stopSimulator() {
        cloudStack.close();
    }

    private void create(List<String> names, Consumer<ScaleDownSpec> tweak) {
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(names);
        spec.getDrain().setRetries(0);
        tweak.accept(spec);
        scaleDown = new ScaleDown();
        scaleDown.setMetadata(new ObjectMetaBuilder().withName("shrink").withGeneration(1L).withUid("uid-1").build());
        scaleDown.setSpec(spec);
    }

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

    private long drainSteps() {
        return nodes.calls.stream().filter(c -> c.startsWith("drain")).count();
    }

    private static Predicate<ScaleDownStatus> waitingFor(String reason) {
        return s -> Conditions.find(s.getConditions(), Conditions.WAITING).map(c -> c.getReason().equals(reason)).orElse(false);
    }

    @Test
    void createdOutsideItsWindowItIsPlannedButCordonsNothingUntilTheWindowOpens() {
        create(List.of(W1, W2), spec -> {
            spec.setWindow(window("America/New_York", "22:00", "02:00", Day.Fri));
            spec.setTimeoutSeconds(600);
        });

        ScaleDownStatus waiting = reconcileUntil("outside the window", waitingFor(WorkGate.OUTSIDE_WINDOW));

        assertThat(condition(Conditions.ACCEPTED).getReason()).as("refusals come at once; the nodes are locked for it").isEqualTo("Planned");
        assertThat(nodes.ours(W1)).containsKey(NodeAnnotations.LOCK);
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));
        assertThat(condition(Conditions.WAITING).getMessage()).contains("Fri 2026-12-04 22:00 America/New_York (2026-12-05T03:00:00Z)");
        assertThat(waiting.getWindow().getOpensAt()).isEqualTo("2026-12-05T03:00:00Z");

        ScaleDownStatus done = reconcileToEnd();

        assertThat(done.getPhase()).as("four days outside the window did not use up the 600 s timeout").isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(done.getNodes()).allSatisfy(n -> assertThat(Timestamps.parse(n.getCordonedAt())).isAfterOrEqualTo(Instant.parse("2026-12-05T03:00:00Z")));
    }

    @Test
    void aWindowClosingMidDrainFinishesThatNodeThenWaitsBeforeTheNextAndBeforeRemoval() {
        for (int i = 0; i < 30; i++) {
            nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(10), 1));
        }
        create(List.of(W1, W2), spec -> spec.setWindow(window("UTC", "12:00", "12:02", Day.Mon)));

        ScaleDownStatus waiting = reconcileUntil("outside the window", waitingFor(WorkGate.OUTSIDE_WINDOW));

        assertThat(waiting.getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsExactly(Phase.Drained, Phase.Cordoned);
        assertThat(Timestamps.parse(waiting.getNodes().get(0).getCompletedAt())).as("the drain in progress went on past 12:02")
                .isAfter(Instant.parse("2026-11-30T12:02:00Z"));
        assertThat(waiting.getPhase()).isEqualTo(ScaleDownStatus.Phase.Draining);

        ScaleDownStatus done = reconcileToEnd();
        assertThat(done.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(Timestamps.parse(done.getNodes().get(1).getStartedAt())).isAfterOrEqualTo(Instant.parse("2026-12-07T12:00:00Z"));
        assertThat(simulator.calls("scaleKubernetesCluster")).hasSize(1);
        assertThat(Timestamps.parse(done.getRemoval().getStartedAt())).as("removal waited for the window too")
                .isAfterOrEqualTo(Instant.parse("2026-12-07T12:00:00Z"));
    }

    @Test
    void aWindowTooShortForTheEstimateIsRefusedWithPreflightFailBeforeAnyNodeIsLockedOrCordoned() {
        // Two drains of 2 min and a removal of 5 min (the priors) do not fit in 5 minutes: the removal begins inside, ends after.
        create(List.of(W1, W2), spec -> {
            spec.setWindow(window("UTC", "12:00", "12:05", Day.Mon));
            spec.setPreflight(dev.cks.nodeops.drain.Preflight.Fail);
        });

        ScaleDownStatus refused = reconcileToEnd();

        assertThat(refused.getPhase()).isEqualTo(ScaleDownStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("ScaleDown shrink is estimated to finish at 2026-11-30T12:09:00Z",
                "drain 2 min a node, prior; removal 5 min a node, prior", "after the end of the window open now", "Nothing was cordoned");
        assertThat(nodes.calls).as("nothing locked, cordoned or drained").noneMatch(c -> c.startsWith("lock") || c.startsWith("cordon")
                || c.startsWith("drain"));
        assertThat(List.of(W1, W2)).noneMatch(nodes::isCordoned);
    }

    @Test
    void theEstimatedFinishIsKeptWhileItDrainsAndGoesAtTheEnd() {
        create(List.of(W1, W2), spec -> { });

        reconcileUntil("draining", s -> s.getPhase() == ScaleDownStatus.Phase.Draining);
        assertThat(scaleDown.getStatus().getEstimatedFinish()).as("two drains of 2 min and a removal of 5 min, from the priors")
                .isEqualTo(Timestamps.format(clock.instant().plus(Duration.ofMinutes(2 * 2 + 5))));
        assertThat(scaleDown.getStatus().getEstimateBasis()).isEqualTo("3 left; drain 2 min a node, prior; removal 5 min a node, prior");

        ScaleDownStatus done = reconcileToEnd();
        assertThat(done.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(done.getEstimatedFinish()).isNull();
    }

    @Test
    void pausedMidDrainItEvictsNothingMoreUntilResumedAndThenRemoves() {
        for (int i = 0; i < 5; i++) {
            nodes.thenDrain(W1, (state, now) -> moving(state, now.plusSeconds(2), 1));
        }
        create(List.of(W1), spec -> spec.setTimeoutSeconds(300));
        reconcileUntil("draining", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Draining));

        scaleDown.getSpec().setPaused(true);
        reconcileUntil("paused", s -> Conditions.isTrue(s.getConditions(), Conditions.PAUSED));
        long steps = drainSteps();
        clock.advance(Duration.ofHours(1));
        reconciler.reconcile(scaleDown, null);

        assertThat(drainSteps()).isEqualTo(steps);
        assertThat(nodes.isCordoned(W1)).isTrue();
        assertThat(simulator.calls("scaleKubernetesCluster")).isEmpty();
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(WorkGate.PAUSED);

        scaleDown.getSpec().setPaused(false);
        ScaleDownStatus done = reconcileToEnd();
        assertThat(done.getPhase()).as("an hour paused did not use up the 300 s timeout").isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(events.reasons()).containsSubsequence(OperationRecorder.PAUSED, OperationRecorder.RESUMED, "RemovalRequested");
    }

    @Test
    void pausedWhileCloudStackRemovesTheNodesTheRemovalRunsToTheEnd() {
        simulator.planJob("scaleKubernetesCluster", JobOutcome.succeedsAfterPolls(3));
        create(List.of(W1), spec -> { });
        reconcileUntil("removal asked for", s -> s.getRemoval() != null && s.getRemoval().getJobId() != null);

        scaleDown.getSpec().setPaused(true);
        reconciler.reconcile(scaleDown, null);
        assertThat(condition(Conditions.PAUSED).getReason()).isEqualTo("Pausing");

        assertThat(reconcileToEnd().getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
    }

    private static dev.cks.nodeops.drain.EscalationStep step(int after, dev.cks.nodeops.drain.EscalationStep.Action action) {
        dev.cks.nodeops.drain.EscalationStep step = new dev.cks.nodeops.drain.EscalationStep();
        step.setAfterSeconds(after);
        step.setAction(action);
        return step;
    }

    @Test
    void skipNodeKeepsTheBlockedNodeAndRemovesTheOthers() {
        for (int i = 0; i < 40; i++) {
            nodes.thenDrain(W1, (state, now) -> FakeNodeWork.heldPods(state, now.plusSeconds(5), "shop/db-pdb", "needs 1 healthy, has 1, 0 disruptions allowed",
                    "shop/db-1"));
        }
        create(List.of(W1, W2), spec -> spec.getDrain().setEscalation(List.of(step(60, dev.cks.nodeops.drain.EscalationStep.Action.SkipNode))));

        ScaleDownStatus done = reconcileToEnd();

        assertThat(done.getPhase()).isEqualTo(ScaleDownStatus.Phase.Succeeded);
        assertThat(done.getTargetNodes()).containsExactly(W2);
        assertThat(done.getKeptNodes()).singleElement().satisfies(kept -> {
            assertThat(kept.getName()).isEqualTo(W1);
            assertThat(kept.getPhase()).isEqualTo(Phase.Kept);
            assertThat(kept.getError()).contains("spec.drain.escalation step 1 (SkipNode").contains("pdb shop/db-pdb");
            assertThat(kept.getDrain().getEscalation()).extracting(r -> r.getAction().name()).containsExactly("SkipNode");
        });
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(simulator.calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids")).isEqualTo(vmIds.get(W2)));
        assertThat(condition(Conditions.SUCCEEDED).getMessage()).contains("Kept (their drain was given up): " + W1);
    }

    @Test
    void rollBackAtTheEndOfTheLadderPutsEverythingBack() {
        for (int i = 0; i < 40; i++) {
            nodes.thenDrain(W1, (state, now) -> FakeNodeWork.heldPods(state, now.plusSeconds(5), "shop/db-pdb", "needs 1 healthy, has 1, 0 disruptions allowed",
                    "shop/db-1"));
        }
        create(List.of(W1, W2), spec -> spec.getDrain().setEscalation(List.of(step(60, dev.cks.nodeops.drain.EscalationStep.Action.RollBack))));

        ScaleDownStatus rolledBack = reconcileToEnd();

        assertThat(rolledBack.getPhase()).isEqualTo(ScaleDownStatus.Phase.RolledBack);
        assertThat(condition(Conditions.ROLLED_BACK).getMessage()).contains("was given up: spec.drain.escalation step 1 (RollBack");
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.isCordoned(W2)).isFalse();
        assertThat(simulator.calls("scaleKubernetesCluster")).isEmpty();
    }

    @Test
    void aNodeThatOptsOutIsNeverPickedAndRefusedByName() {
        nodes.get(W2).getMetadata().getAnnotations().put(NodeAnnotations.EXCLUDE, "true");
        create(List.of(W1, W2), spec -> { });
        reconcileToEnd();
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("Node " + W2 + " is left out: it opts out of node operations "
                + "(nodeops.cks.dev/exclude: true); remove it from spec.nodeNames");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));
    }
}
