package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestWindows.window;
import static dev.cks.nodeops.testing.FakeNodeWork.moving;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeRole;
import dev.cks.nodeops.operation.MaintenanceWindow;
import dev.cks.nodeops.operation.MaintenanceWindow.Day;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.WindowFit;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.ReconcileLoop;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * How a NodeUpgrade is operated, on fakes with time moved by hand: its window (time zones, closing
 * mid-run), pause and resume, maxUnavailable, soak and the drained workloads' health gate, nodes that
 * opt out, the version-skew guard, and mode: Continuous (holding, a joiner, a newer node, a new target). The Script
 * executor only: CloudStack plays no part here.
 */
class NodeUpgradeOperatingTest {
    private static final String FROM = "v1.34.2";
    private static final String TARGET = "v1.35.4";
    private static final String CONTROL = "prod-control-a1";
    private static final List<String> WORKERS = List.of("prod-node-b1", "prod-node-b2", "prod-node-b3", "prod-node-b4");
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade \"$2\"\n";
    /** Monday 2026-11-30, 12:00 UTC. */
    private static final Instant MONDAY_NOON = Instant.parse("2026-11-30T12:00:00Z");

    private final ManualTime clock = new ManualTime(MONDAY_NOON);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final FakeNodeWork nodes = new FakeNodeWork();
    private final FakeUpgradeJobs jobs = new FakeUpgradeJobs();
    private final RecordingEvents events = new RecordingEvents();
    private final TestSettings settings = new TestSettings();
    private final List<String> apiServers = new ArrayList<>(List.of(FROM));
    /** Nodes whose Job the "kubelet" lets fail. */
    private final Set<String> failingJobs = new HashSet<>();
    /** Every moment the set of cordoned nodes changed, with the set. */
    private final List<Set<String>> cordonedOverTime = new ArrayList<>();
    private final NodeUpgradeReconciler reconciler;
    private NodeUpgrade upgrade;

    NodeUpgradeOperatingTest() {
        nodes.add(TestNodes.node(CONTROL).controlPlane().version(FROM).created("2025-06-01T00:00:00Z").build());
        WORKERS.forEach(w -> nodes.add(TestNodes.node(w).version(FROM).build()));
        jobs.configMaps.put("upgrade", Map.of("upgrade.sh", SCRIPT));
        settings.scriptSha256.add(ScriptTrust.sha256(SCRIPT));
        // No CloudStack Secret: the Script executor needs none (it only compares CloudStack's record at the end, when it can).
        CloudStackAccess noCloudStack = new CloudStackAccess(() -> {
            throw new CloudStackAccess.Unavailable("Secret kube-system/cloudstack-secret with the CloudStack API URL and keys does not exist");
        }, Optional.empty());
        OperationRecorder recorder = new OperationRecorder(NodeUpgradeReconciler.KIND, events, new OperationMetrics(registry));
        reconciler = new NodeUpgradeReconciler(clock, settings, noCloudStack, new OperationPorts(nodes, recorder, new RecordingStatusStore()), jobs,
                () -> apiServers);
    }

    private NodeUpgrade create(Consumer<NodeUpgradeSpec> tweak) {
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setExecutor(UpgradeBed.script("upgrade", "upgrade.sh"));
        spec.getDrain().setRetries(0);
        tweak.accept(spec);
        upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName("to-1-35").withGeneration(1L).withUid("uid-7").withAnnotations(new java.util.HashMap<>()).build());
        upgrade.setSpec(spec);
        return upgrade;
    }

    private NodeUpgradeStatus reconcileUntil(String what, Predicate<NodeUpgradeStatus> until) {
        return new ReconcileLoop<NodeUpgrade, NodeUpgradeStatus>(u -> reconciler.reconcile(u, null), clock, this::playKubelets, this::describe)
                .until(upgrade, what, until);
    }

    private NodeUpgradeStatus reconcileToEnd() {
        return reconcileUntil("finished", NodeUpgradeStatus::finished);
    }

    private UpdateControl<NodeUpgrade> reconcileOnce() {
        UpdateControl<NodeUpgrade> control = reconciler.reconcile(upgrade, null);
        recordCordons();
        return control;
    }

    /** A succeeded Job brings its node back Ready at the target; kubeadm upgrade apply takes the API server along. */
    private void playKubelets() {
        recordCordons();
        jobs.jobs.values().stream().filter(job -> UpgradeJob.outcome(job) instanceof UpgradeJob.Running).toList().forEach(job -> {
            String node = job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE);
            boolean succeeds = !failingJobs.contains(node);
            jobs.finish(node, succeeds);
            if (succeeds) {
                String version = job.getMetadata().getAnnotations().get(UpgradeJob.ANNOTATION_TARGET);
                nodes.get(node).getStatus().getNodeInfo().setKubeletVersion(version);
                if (node.equals(CONTROL)) {
                    apiServers.set(0, version);
                }
            }
        });
    }

    private void recordCordons() {
        Set<String> cordoned = new LinkedHashSet<>();
        nodes.nodes().forEach(n -> {
            if (nodes.isCordoned(n.getMetadata().getName())) {
                cordoned.add(n.getMetadata().getName());
            }
        });
        if (cordonedOverTime.isEmpty() || !cordonedOverTime.get(cordonedOverTime.size() - 1).equals(cordoned)) {
            cordonedOverTime.add(cordoned);
        }
    }

    private String describe() {
        NodeUpgradeStatus status = upgrade.getStatus();
        return "phase " + status.getPhase() + ", message " + status.getMessage() + ", nodes "
                + status.getNodes().stream().map(n -> n.getName() + "=" + n.getPhase()).toList() + ", conditions " + status.getConditions();
    }

    private Condition condition(String type) {
        return Conditions.find(upgrade.getStatus().getConditions(), type).orElseThrow(() -> new AssertionError("no " + type + ": " + describe()));
    }

    private UpgradeNodeStatus node(String name) {
        return upgrade.getStatus().getNodes().stream().filter(n -> n.getName().equals(name)).findFirst().orElseThrow();
    }

    /** The control plane (its node and the API server) is at the target already: only workers are upgraded. */
    private void controlPlaneUpgraded() {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        apiServers.set(0, TARGET);
    }

    private boolean cordonedAny() {
        return nodes.calls.stream().anyMatch(c -> c.startsWith("cordon"));
    }

    // --- the window ---

    @Test
    void createdOutsideItsWindowItDoesNothingUntilTheWindowOpensAndTheWaitUsesNoneOfItsTime() {
        // Saturday 01:00-05:00 in Berlin is Saturday 00:00 UTC in winter.
        create(spec -> {
            spec.setWindow(window("Europe/Berlin", "01:00", "05:00", Day.Sat));
            spec.setTimeoutSeconds(3600);
        });

        UpdateControl<NodeUpgrade> planned = reconcileOnce();
        UpdateControl<NodeUpgrade> waiting = reconcileOnce();

        assertThat(planned.getScheduleDelay()).isPresent();
        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo("Planned");
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(WorkGate.OUTSIDE_WINDOW);
        assertThat(condition(Conditions.WAITING).getMessage()).contains("Sat 2026-12-05 01:00 Europe/Berlin (2026-12-05T00:00:00Z)");
        assertThat(upgrade.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Waiting);
        assertThat(upgrade.getStatus().getWindow().getState()).hasToString("Closed");
        assertThat(upgrade.getStatus().getWindow().getOpensAt()).isEqualTo("2026-12-05T00:00:00Z");
        assertThat(waiting.getScheduleDelay()).as("woken when the window opens").contains(Duration.between(MONDAY_NOON,
                Instant.parse("2026-12-05T00:00:00Z")).toMillis());
        assertThat(cordonedAny()).isFalse();
        assertThat(events.all()).as("the wait announced once, under its reason").filteredOn(e -> e.reason().equals(WorkGate.OUTSIDE_WINDOW))
                .singleElement().extracting(RecordingEvents.RecordedEvent::type).isEqualTo("Normal");
        String deadlineAtCreation = upgrade.getStatus().getDeadline();

        NodeUpgradeStatus done = reconcileToEnd();

        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(Timestamps.parse(node(CONTROL).getStartedAt())).isAfterOrEqualTo(Instant.parse("2026-12-05T00:00:00Z"));
        assertThat(Timestamps.parse(done.getDeadline())).as("the days outside the window did not count against timeoutSeconds")
                .isAfter(Timestamps.parse(deadlineAtCreation).plus(Duration.ofDays(4)));
        assertThat(done.getWindow().getState()).hasToString("Open");
    }

    @Test
    void aWindowClosingMidRunFinishesTheNodeInProgressAndStartsNoOtherUntilItOpensAgain() {
        // Open on Monday 12:00-12:10 UTC; each worker's drain takes five minutes.
        WORKERS.forEach(w -> {
            for (int i = 0; i < 30; i++) {
                nodes.thenDrain(w, (state, now) -> moving(state, now.plusSeconds(10), 1));
            }
        });
        controlPlaneUpgraded();
        create(spec -> spec.setWindow(window("UTC", "12:00", "12:10", Day.Mon)));

        NodeUpgradeStatus closed = reconcileUntil("outside the window", s -> s.getConditions().stream()
                .anyMatch(c -> c.getType().equals(Conditions.WAITING) && c.getReason().equals(WorkGate.OUTSIDE_WINDOW)));

        Instant closedAt = Instant.parse("2026-11-30T12:10:00Z");
        List<UpgradeNodeStatus> started = closed.getNodes().stream().filter(n -> n.getStartedAt() != null).toList();
        assertThat(started).allSatisfy(n -> assertThat(Timestamps.parse(n.getStartedAt())).isBefore(closedAt));
        assertThat(started).as("the node in progress when the window closed finished").allSatisfy(n -> assertThat(n.getPhase()).isEqualTo(Phase.Succeeded));
        assertThat(started.stream().map(UpgradeNodeStatus::getCompletedAt).map(Timestamps::parse)).anyMatch(t -> t.isAfter(closedAt));
        assertThat(closed.getNodes()).anyMatch(n -> n.getPhase() == Phase.Pending);
        assertThat(closed.getWindow().getOpensAt()).isEqualTo("2026-12-07T12:00:00Z");

        NodeUpgradeStatus done = reconcileToEnd();
        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(done.getNodes()).filteredOn(n -> n.getPhase() == Phase.Succeeded && n.getStartedAt() != null && Timestamps.parse(n.getStartedAt())
                .isAfter(closedAt)).allSatisfy(n -> assertThat(Timestamps.parse(n.getStartedAt())).isAfterOrEqualTo(Instant.parse("2026-12-07T12:00:00Z")));
    }

    @Test
    void withStopAtSafeBoundaryAClosingWindowStopsTheDrainBetweenSteps() {
        for (int i = 0; i < 40; i++) {
            nodes.thenDrain(CONTROL, (state, now) -> moving(state, now.plusSeconds(30), 1));
        }
        create(spec -> {
            MaintenanceWindow window = window("UTC", "12:00", "12:05", Day.Mon);
            window.setOnClose(MaintenanceWindow.OnClose.StopAtSafeBoundary);
            spec.setWindow(window);
        });

        reconcileUntil("stopped", s -> s.getConditions().stream().anyMatch(c -> c.getType().equals(Conditions.WAITING)));
        long drainsWhenClosed = nodes.calls.stream().filter(c -> c.equals("drain " + CONTROL)).count();
        assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Draining);
        assertThat(nodes.isCordoned(CONTROL)).as("stays cordoned at the boundary").isTrue();
        assertThat(upgrade.getStatus().getPhase()).as("a node is held: the phase stays").isEqualTo(NodeUpgradeStatus.Phase.Running);

        clock.advance(Duration.ofHours(3));
        reconcileOnce();
        assertThat(nodes.calls.stream().filter(c -> c.equals("drain " + CONTROL)).count()).as("no drain step outside the window")
                .isEqualTo(drainsWhenClosed);

        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    // --- the estimated finish and the window it must fit ---

    @Test
    void aWindowTooShortForTheEstimateIsRefusedWithPreflightFailBeforeAnyNodeIsTouchedWithTheEstimateInTheMessage() {
        controlPlaneUpgraded();
        // Four workers of 6 min each (the prior) one at a time do not fit in 10 minutes.
        create(spec -> {
            spec.setWindow(window("UTC", "12:00", "12:10", Day.Mon));
            spec.setPreflight(dev.cks.nodeops.drain.Preflight.Fail);
        });

        NodeUpgradeStatus refused = reconcileToEnd();

        assertThat(refused.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getStatus()).isEqualTo("False");
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains(
                "NodeUpgrade to-1-35 is estimated to finish at 2026-12-07T12:12:00Z (4 left; worker 6 min a node, prior)",
                "after the end of the window open now, which closes on Mon 2026-11-30 12:10 UTC (2026-11-30T12:10:00Z)", "Nothing was cordoned");
        assertThat(nodes.calls).as("nothing locked, cordoned or drained").noneMatch(c -> c.startsWith("lock") || c.startsWith("cordon")
                || c.startsWith("drain"));
        assertThat(cordonedOverTime).allSatisfy(cordoned -> assertThat(cordoned).isEmpty());
        assertThat(refused.getEstimatedFinish()).as("an operation that ended has no estimate").isNull();
    }

    @Test
    void withPreflightWarnAWindowTooShortIsAWarningAndTheUpgradeGoesOnOverSeveralWindows() {
        controlPlaneUpgraded();
        create(spec -> spec.setWindow(window("UTC", "12:00", "12:10", Day.Mon)));

        reconcileOnce();

        assertThat(condition(WindowFit.WINDOW_TOO_SHORT).getStatus()).isEqualTo("True");
        assertThat(condition(WindowFit.WINDOW_TOO_SHORT).getMessage()).contains("estimated to finish at 2026-12-07T12:12:00Z", "spec.preflight is Warn");
        assertThat(events.all()).filteredOn(e -> e.reason().equals(WindowFit.WINDOW_TOO_SHORT)).singleElement()
                .extracting(RecordingEvents.RecordedEvent::type).isEqualTo("Warning");
        assertThat(upgrade.getStatus().getEstimatedFinish()).isEqualTo("2026-12-07T12:12:00Z");
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    @Test
    void theEstimatedFinishMovesFromThePriorsToTheMeasuredNodesAsTheyFinishAndGoesAtTheEnd() {
        controlPlaneUpgraded();
        create(spec -> spec.setSoakSeconds(60));

        reconcileOnce();
        assertThat(upgrade.getStatus().getEstimatedFinish()).as("4 workers of 6 min and their minute of soak, from the priors")
                .isEqualTo(Timestamps.format(MONDAY_NOON.plus(Duration.ofMinutes(4 * 7))));
        assertThat(upgrade.getStatus().getEstimateBasis()).isEqualTo("4 left; worker 7 min a node, prior");

        NodeUpgradeStatus oneDone = reconcileUntil("one worker done", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Succeeded
                && n.getStartedAt() != null));
        UpgradeNodeStatus first = oneDone.getNodes().stream().filter(n -> n.getPhase() == Phase.Succeeded && n.getStartedAt() != null).findFirst()
                .orElseThrow();
        Duration took = Duration.between(Timestamps.parse(first.getStartedAt()), Timestamps.parse(first.getCompletedAt()));
        Instant now = clock.instant();

        assertThat(oneDone.getEstimateBasis()).isEqualTo("3 left; worker " + dev.cks.nodeops.operation.FinishEstimate.describe(took)
                + " a node, measured: the mean of 1 finished here");
        assertThat(Timestamps.parse(oneDone.getEstimatedFinish())).as("three more as long as the first, from now")
                .isBetween(now.plus(took.multipliedBy(3)).minusSeconds(1), now.plus(took.multipliedBy(3)).plusSeconds(1));

        NodeUpgradeStatus done = reconcileToEnd();
        assertThat(done.getEstimatedFinish()).isNull();
        assertThat(done.getEstimateBasis()).isNull();
    }

    // --- pause ---

    @Test
    void pausedMidDrainItStopsAtTheNextStepBoundaryAndResumingCompletesIt() {
        for (int i = 0; i < 6; i++) {
            nodes.thenDrain(CONTROL, (state, now) -> moving(state, now.plusSeconds(5), 2));
        }
        create(spec -> spec.setTimeoutSeconds(600));
        reconcileUntil("draining", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Draining));

        upgrade.getSpec().setPaused(true);
        UpdateControl<NodeUpgrade> paused = reconcileOnce();

        assertThat(condition(Conditions.PAUSED).getStatus()).isEqualTo("True");
        assertThat(condition(Conditions.PAUSED).getReason()).isEqualTo("Paused");
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(WorkGate.PAUSED);
        assertThat(paused.getScheduleDelay()).as("only a change of the spec wakes it (30 s safety net)").contains(30_000L);
        long drains = nodes.calls.stream().filter(c -> c.startsWith("drain")).count();
        clock.advance(Duration.ofHours(2));
        reconcileOnce();
        assertThat(nodes.calls.stream().filter(c -> c.startsWith("drain")).count()).as("no eviction while paused").isEqualTo(drains);
        assertThat(nodes.isCordoned(CONTROL)).isTrue();
        assertThat(events.reasons()).containsOnlyOnce(OperationRecorder.PAUSED);

        upgrade.getSpec().setPaused(false);
        NodeUpgradeStatus done = reconcileToEnd();

        assertThat(done.getPhase()).as("two hours paused did not use up the 600 s timeout").isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(Conditions.find(done.getConditions(), Conditions.PAUSED)).isEmpty();
        assertThat(events.reasons()).containsSubsequence(OperationRecorder.PAUSED, OperationRecorder.RESUMED, "Succeeded");
    }

    @Test
    void pausedWhileAJobRunsItIsPausingUntilTheNodeIsDoneAndStartsNoOther() {
        create(spec -> { });
        reconcileUntil("the control plane's Job", s -> jobs.hasJob(CONTROL));
        upgrade.getSpec().setPaused(true);

        reconcileOnce();
        assertThat(condition(Conditions.PAUSED).getStatus()).as("a Job is not interrupted").isEqualTo("False");
        assertThat(condition(Conditions.PAUSED).getReason()).isEqualTo("Pausing");

        NodeUpgradeStatus paused = reconcileUntil("paused", s -> Conditions.isTrue(s.getConditions(), Conditions.PAUSED));
        assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(paused.getNodes()).filteredOn(n -> n.getRole() == dev.cks.nodeops.nodes.NodeRole.Worker)
                .allSatisfy(n -> assertThat(n.getPhase()).isEqualTo(Phase.Pending));
        assertThat(paused.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Waiting);
    }

    // --- maxUnavailable ---

    @Test
    void maxUnavailableTwoUpgradesTwoWorkersAtOnceNeverMoreAndTheControlPlaneAlone() {
        WORKERS.forEach(w -> nodes.thenDrain(w, (state, now) -> moving(state, now.plusSeconds(3), 1)));
        create(spec -> spec.setMaxUnavailable(new IntOrString(2)));

        NodeUpgradeStatus done = reconcileToEnd();

        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(cordonedOverTime).as("never more than two nodes cordoned").allSatisfy(set -> assertThat(set).hasSizeLessThanOrEqualTo(2));
        assertThat(cordonedOverTime).as("two workers at once").anySatisfy(set -> assertThat(set).hasSize(2).doesNotContain(CONTROL));
        assertThat(cordonedOverTime).filteredOn(set -> set.contains(CONTROL)).allSatisfy(set -> assertThat(set).containsExactly(CONTROL));
        assertThat(nodes.calls.indexOf("release " + CONTROL + " uncordon")).as("the control plane is done before any worker starts")
                .isLessThan(nodes.calls.indexOf("cordon " + WORKERS.get(0)));
    }

    @Test
    void workersNotReadyOrCordonedBySomeoneElseCountAgainstMaxUnavailable() {
        controlPlaneUpgraded();
        nodes.get(WORKERS.get(3)).getSpec().setUnschedulable(true);
        WORKERS.forEach(w -> nodes.thenDrain(w, (state, now) -> moving(state, now.plusSeconds(3), 1)));
        create(spec -> spec.setMaxUnavailable(new IntOrString("50%")));

        reconcileOnce();
        reconcileOnce();

        assertThat(nodes.calls.stream().filter(c -> c.startsWith("cordon")))
                .as("50% of 4 is 2, and one is cordoned by someone else already: one more, and that one, which costs nothing")
                .containsExactly("cordon " + WORKERS.get(0), "cordon " + WORKERS.get(3));
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(nodes.isCordoned(WORKERS.get(3))).as("cordoned before: stays cordoned").isTrue();
    }

    @Test
    void aFailedNodeStartsNoOtherAndTheUpgradeFailsOnceTheNodesInProgressAreDone() {
        controlPlaneUpgraded();
        failingJobs.add(WORKERS.get(0));
        create(spec -> spec.setMaxUnavailable(new IntOrString(2)));

        NodeUpgradeStatus failed = reconcileToEnd();

        assertThat(failed.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(WORKERS.get(0)).getPhase()).isEqualTo(Phase.Failed);
        assertThat(node(WORKERS.get(1)).getPhase()).as("in progress with it: finished").isEqualTo(Phase.Succeeded);
        assertThat(node(WORKERS.get(2)).getPhase()).isEqualTo(Phase.Pending);
        assertThat(condition(Conditions.FAILED).getMessage()).contains("failed at node " + WORKERS.get(0));
        WORKERS.forEach(w -> assertThat(nodes.ours(w)).isEmpty());
    }

    // --- soak ---

    @Test
    void theNextNodeStartsOnlyAfterTheSoakAndTheDrainedWorkloadsAreReadyAgain() {
        controlPlaneUpgraded();
        nodes.thenDrain(WORKERS.get(0), (state, now) -> {
            state.getWorkloads().add("ReplicaSet shop/web-7d9");
            return FakeNodeWork.done(state);
        });
        nodes.notReady.put("ReplicaSet shop/web-7d9", "1 of 2 Ready");
        create(spec -> {
            spec.setSoakSeconds(300);
            spec.setWaitForDrainedWorkloads(true);
        });

        NodeUpgradeStatus soaking = reconcileUntil("soaking", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Soaking));
        Instant ready = clock.instant();
        assertThat(soaking.getMessage()).contains("soaks until");
        assertThat(nodes.isCordoned(WORKERS.get(0))).as("uncordoned before its soak").isFalse();

        reconcileUntil("waiting for the workloads", s -> s.getMessage().contains("ReplicaSet shop/web-7d9 (1 of 2 Ready)"));
        assertThat(Duration.between(ready, clock.instant())).isGreaterThanOrEqualTo(Duration.ofSeconds(300));
        assertThat(nodes.calls).doesNotContain("cordon " + WORKERS.get(1));

        clock.advance(Duration.ofMinutes(1));
        nodes.notReady.clear();
        reconcileToEnd();
        assertThat(nodes.calls.indexOf("cordon " + WORKERS.get(1))).isGreaterThan(nodes.calls.lastIndexOf("workloads ReplicaSet shop/web-7d9"));
        assertThat(node(WORKERS.get(0)).getPhase()).isEqualTo(Phase.Succeeded);
    }

    // --- the escalation ladder ---

    private static dev.cks.nodeops.drain.EscalationStep step(int after, dev.cks.nodeops.drain.EscalationStep.Action action, String app) {
        dev.cks.nodeops.drain.EscalationStep step = new dev.cks.nodeops.drain.EscalationStep();
        step.setAfterSeconds(after);
        step.setAction(action);
        if (app != null) {
            step.setSelector(new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().addToMatchLabels("app", app).build());
        }
        return step;
    }

    @Test
    void aBlockedDrainClimbsTheLadderDeletingOnlyOptedInPodsThenSkipsTheNodeAndGoesOn() {
        controlPlaneUpgraded();
        String w1 = WORKERS.get(0);
        // web-pdb holds web-1 until the ladder deletes it; db-pdb holds db-1 for good.
        for (int i = 0; i < 100; i++) {
            nodes.thenDrain(w1, (state, now) -> nodes.calls.stream().anyMatch(c -> c.startsWith("delete pod"))
                    ? FakeNodeWork.heldPods(state, now.plusSeconds(5), "shop/db-pdb", "needs 1 healthy, has 1, 0 disruptions allowed", "shop/db-1")
                    : FakeNodeWork.heldPods(state, now.plusSeconds(5), "shop/web-pdb", "needs 2 healthy, has 2, 0 disruptions allowed", "shop/web-1"));
        }
        create(spec -> {
            spec.getDrain().setTimeoutSeconds(3600);
            spec.getDrain().setEscalation(List.of(step(30, dev.cks.nodeops.drain.EscalationStep.Action.Warn, null),
                    step(60, dev.cks.nodeops.drain.EscalationStep.Action.DeletePods, "web"),
                    step(120, dev.cks.nodeops.drain.EscalationStep.Action.SkipNode, null)));
            spec.getDrain().getEscalation().get(1).setGracePeriodSeconds(5);
        });

        NodeUpgradeStatus warned = reconcileUntil("warned", s -> Conditions.isTrue(s.getConditions(), Conditions.DRAIN_BLOCKED));
        assertThat(condition(Conditions.DRAIN_BLOCKED).getMessage()).contains("The drain of node " + w1 + " is blocked")
                .contains("pdb shop/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed (pods shop/web-1)");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("delete pod"));

        NodeUpgradeStatus done = reconcileToEnd();

        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(nodes.calls.stream().filter(c -> c.startsWith("delete pod"))).as("only the opted-in web pod, once")
                .containsExactly("delete pod shop/web-1 grace 5");
        UpgradeNodeStatus skipped = node(w1);
        assertThat(skipped.getPhase()).isEqualTo(Phase.Skipped);
        assertThat(skipped.getSkipReason()).contains("spec.drain.escalation step 3 (SkipNode").contains("pdb shop/db-pdb");
        assertThat(nodes.isCordoned(w1)).isFalse();
        assertThat(skipped.getDrain().getEscalation()).extracting(r -> r.getAction() + " " + r.getCause() + " " + r.getResult()).containsExactly(
                "Warn shop/web-pdb warned", "DeletePods shop/web-pdb shop/web-1: deleted",
                "Warn shop/db-pdb warned", "SkipNode shop/db-pdb gave the node up");
        assertThat(skipped.getDrain().getEscalation()).allSatisfy(r -> assertThat(r.getAt()).isNotNull());
        assertThat(events.reasons()).containsSubsequence(OperationRecorder.DRAIN_BLOCKED, OperationRecorder.PODS_DELETED,
                OperationRecorder.DRAIN_BLOCKED, NodeUpgradePipeline.NODE_SKIPPED);
        assertThat(WORKERS.subList(1, 4)).allSatisfy(w -> assertThat(node(w).getPhase()).isEqualTo(Phase.Succeeded));
        assertThat(condition(Conditions.SUCCEEDED).getReason()).isEqualTo("NodesSkipped");
        assertThat(Conditions.find(done.getConditions(), Conditions.DRAIN_BLOCKED)).as("gone with the node").isEmpty();
    }

    @Test
    void aDrainThatRunsOutOfAttemptsTakesTheLaddersGiveUpStep() {
        controlPlaneUpgraded();
        String w1 = WORKERS.get(0);
        nodes.thenDrain(w1, (state, now) -> dev.cks.nodeops.drain.DrainResult.gaveUp(state, "Node " + w1 + " still has 1 pod: pdb shop/db-pdb",
                new dev.cks.nodeops.drain.DrainResult.PodsLeft(1, List.of(), false, List.of(new dev.cks.nodeops.drain.DrainEscalation.HeldPod(
                        new dev.cks.nodeops.drain.EvictionApi.PodRef("shop", "db-1", "u"), Map.of("app", "db"), "shop/db-pdb")))));
        create(spec -> spec.getDrain().setEscalation(List.of(step(3600, dev.cks.nodeops.drain.EscalationStep.Action.SkipNode, "db"))));

        reconcileToEnd();

        assertThat(node(w1).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(node(w1).getSkipReason()).contains("ran out of attempts").contains("pdb shop/db-pdb");
        assertThat(upgrade.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    // --- opting out ---

    @Test
    void aNodeThatOptsOutIsSkippedAndReportedAlsoWhenItOptsOutAfterThePlan() {
        nodes.get(WORKERS.get(1)).getMetadata().getAnnotations().put(NodeAnnotations.EXCLUDE, "true");
        create(spec -> { });
        reconcileOnce();
        nodes.get(WORKERS.get(2)).getMetadata().getAnnotations().put(NodeAnnotations.EXCLUDE, "disk replacement on Friday");

        NodeUpgradeStatus done = reconcileToEnd();

        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(condition(Conditions.SUCCEEDED).getReason()).isEqualTo("NodesSkipped");
        assertThat(condition(Conditions.SUCCEEDED).getMessage()).isEqualTo("3 of 5 selected nodes are at " + TARGET + " and Ready; not upgraded: "
                + WORKERS.get(1) + " (it opts out of node operations (nodeops.cks.dev/exclude: true)), " + WORKERS.get(2)
                + " (it opts out of node operations (nodeops.cks.dev/exclude: disk replacement on Friday)).");
        assertThat(node(WORKERS.get(1)).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(nodes.calls).doesNotContain("cordon " + WORKERS.get(1), "cordon " + WORKERS.get(2));
        assertThat(events.all()).filteredOn(e -> e.reason().equals(NodeUpgradePipeline.NODE_SKIPPED)).hasSize(2);
    }

    // --- version skew ---

    @Test
    void aWorkerOnlyUpgradeAboveTheApiServerIsRefusedQuotingTheRule() {
        create(spec -> spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", WORKERS.get(0)))));

        reconcileToEnd();

        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo(OperationRecorder.REFUSED);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("kubelet must not be newer than kube-apiserver")
                .contains("the API server is at v1.34.2").contains("Nothing was cordoned");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));
    }

    @Test
    void anUpgradeOfTheControlPlaneToTheNextMinorIsAccepted() {
        create(spec -> { });
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    // --- mode: Continuous ---

    private NodeUpgradeStatus holding(String what, Predicate<NodeUpgradeStatus> also) {
        return reconcileUntil(what, s -> s.getPhase() == NodeUpgradeStatus.Phase.Holding && also.test(s));
    }

    /**
     * Cluster: a control-plane node and four workers at the old version, then a fifth worker joining at it (CKS scaling
     * up at the version CloudStack records); no other actor. The rollout ends in Holding, not Succeeded, and the joiner
     * is cordoned, drained and upgraded with a Job of its own.
     */
    @Test
    void aContinuousUpgradeHoldsAfterItsRolloutAndUpgradesAWorkerThatJoinsBelowTheTarget() {
        create(spec -> spec.setMode(UpgradeMode.Continuous));
        NodeUpgradeStatus held = holding("holding after the rollout", s -> true);

        assertThat(held.finished()).isFalse();
        assertThat(condition(Conditions.HOLDING).getStatus()).isEqualTo("True");
        assertThat(held.getConditions()).noneMatch(c -> c.getType().equals(Conditions.SUCCEEDED));
        assertThat(registry.find("cks.operations").counters()).as("it has not ended").isEmpty();
        assertThat(held.getHold().getBelowTarget()).isZero();
        assertThat(held.getTargetVersion()).isEqualTo(TARGET);
        int jobsAfterRollout = jobs.created.size();

        nodes.add(TestNodes.node("prod-node-b5").version(FROM).created("2026-11-30T12:30:00Z").build());
        NodeUpgradeStatus again = holding("holding after correcting prod-node-b5", s -> "prod-node-b5".equals(s.getHold().getLastCorrectedNode()));

        assertThat(jobs.created).hasSize(jobsAfterRollout + 1);
        assertThat(nodes.calls).contains("cordon prod-node-b5", "drain prod-node-b5");
        assertThat(node("prod-node-b5").getVersion()).isEqualTo(TARGET);
        assertThat(nodes.isCordoned("prod-node-b5")).isFalse();
        assertThat(again.getHold().getLastCorrectedAt()).isNotNull();
        assertThat(events.all()).filteredOn(e -> e.reason().equals(OperationRecorder.CORRECTING)).singleElement()
                .satisfies(e -> assertThat(e.message()).contains("prod-node-b5").contains("it joined"));
    }

    /**
     * Cluster: the control-plane node at the target, one worker at the old version, one newer than the target; no other
     * actor. A Continuous rollout never takes the newer node down (a Once one would, as before) and reports it.
     */
    @Test
    void aContinuousUpgradeLeavesANodeNewerThanItsTargetAloneAndReportsIt() {
        controlPlaneUpgraded();
        nodes.get(WORKERS.get(0)).getStatus().getNodeInfo().setKubeletVersion("v1.35.10");
        create(spec -> spec.setMode(UpgradeMode.Continuous));

        NodeUpgradeStatus held = holding("holding", s -> true);

        assertThat(node(WORKERS.get(0)).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(node(WORKERS.get(0)).getSkipReason()).contains("never takes a node down");
        assertThat(nodes.calls).doesNotContain("cordon " + WORKERS.get(0));
        assertThat(held.getHold().getNewer()).containsExactly(WORKERS.get(0) + " (v1.35.10)");
        assertThat(events.all()).filteredOn(e -> e.reason().equals(NodeUpgradeReconciler.NEWER_THAN_TARGET)).singleElement()
                .satisfies(e -> assertThat(e.message()).contains(WORKERS.get(0)));
        assertThat(nodes.get(WORKERS.get(0)).getStatus().getNodeInfo().getKubeletVersion()).isEqualTo("v1.35.10");
    }

    /**
     * Cluster: a control-plane node and four workers held at the target; the other actor is a person changing
     * spec.targetVersion to the next patch. A new rollout plans every node again, with a Job of its own per node.
     */
    @Test
    void aNewTargetOfAContinuousUpgradeStartsANewRolloutWithNewJobs() {
        create(spec -> spec.setMode(UpgradeMode.Continuous));
        holding("holding at " + TARGET, s -> true);
        int jobsAfterRollout = jobs.created.size();

        upgrade.getSpec().setTargetVersion("v1.35.5");
        NodeUpgradeStatus again = holding("holding at v1.35.5", s -> "v1.35.5".equals(s.getTargetVersion()));

        assertThat(jobs.created).hasSize(jobsAfterRollout * 2).doesNotHaveDuplicates();
        assertThat(again.getNodes()).allSatisfy(n -> assertThat(n.getVersion()).isEqualTo("v1.35.5"));
        assertThat(events.all()).anySatisfy(e -> assertThat(e.reason()).isEqualTo(NodeUpgradeReconciler.TARGET_CHANGED));
    }

    /**
     * Cluster: a control-plane node and four workers at the old version; the other actor is a person changing
     * spec.targetVersion while a worker's upgrade Job runs. That worker finishes at the version its Job was made for
     * (it is never left waiting for a version its Job does not install); then a new rollout takes every node to the new target.
     */
    @Test
    void aTargetChangedWhileAJobRunsLetsThatNodeFinishAtItsJobsVersionBeforeTheNewRollout() {
        create(spec -> spec.setMode(UpgradeMode.Continuous));
        Predicate<UpgradeNodeStatus> workerWithJob = n -> n.getRole() == NodeRole.Worker && n.getJobName() != null;
        String worker = reconcileUntil("a worker's Job made", s -> s.getNodes().stream().anyMatch(workerWithJob))
                .getNodes().stream().filter(workerWithJob).findFirst().orElseThrow().getName();

        upgrade.getSpec().setTargetVersion("v1.35.5");
        NodeUpgradeStatus again = holding("holding at v1.35.5", s -> "v1.35.5".equals(s.getTargetVersion()));

        assertThat(jobs.jobs.values()).filteredOn(job -> worker.equals(job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE)))
                .extracting(job -> job.getMetadata().getAnnotations().get(UpgradeJob.ANNOTATION_TARGET)).containsExactly(TARGET, "v1.35.5");
        assertThat(again.getNodes()).allSatisfy(n -> assertThat(n.getVersion()).isEqualTo("v1.35.5"));
        assertThat(nodes.nodes()).noneMatch(n -> nodes.isCordoned(n.getMetadata().getName()));
    }

    /**
     * Cluster: a control-plane node and four workers held at the target; the other actor is a worker reinstalled from an
     * old image (back Ready at the old version). It gets a second Job, never its first, finished one again: with the
     * first Job's name the correction would take that Job's success for its own and wait for a version nothing installs.
     */
    @Test
    void aWorkerBackAtTheOldVersionIsUpgradedByASecondJobNotByItsFirstOneAgain() {
        create(spec -> spec.setMode(UpgradeMode.Continuous));
        holding("holding after the rollout", s -> true);
        String worker = WORKERS.get(2);
        String firstJob = node(worker).getJobName();

        nodes.get(worker).getStatus().getNodeInfo().setKubeletVersion(FROM);
        NodeUpgradeStatus again = holding("holding after correcting " + worker, s -> worker.equals(s.getHold().getLastCorrectedNode()));

        assertThat(jobs.created).filteredOn(name -> name.contains(worker)).hasSize(2).doesNotHaveDuplicates().contains(firstJob);
        assertThat(node(worker).getJobName()).isNotEqualTo(firstJob);
        assertThat(node(worker).getVersion()).isEqualTo(TARGET);
        assertThat(again.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Holding);
    }
}
