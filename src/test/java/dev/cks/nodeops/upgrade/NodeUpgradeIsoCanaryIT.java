package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.ServedPodLog;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The ISO canary of the packaged operator on the KWOK bed, against the CloudStack simulator: its attach, its Job and its
 * detach as a real API server and a real Job controller see them. KWOK completes the canary's Job; the pod's log is what
 * the bed serves for it. Where a test serves none, the canary reaches no verdict: an ISO that was never judged is never
 * used, and the NodeUpgrade is refused with nothing cordoned. Where a test serves one ({@link ServedPodLog}), it is what
 * verify-iso.sh prints for an unpacked ISO of the target ({@link UnpackedIso}), run on this machine with the Job's own
 * arguments, and the operator reads its verdict through the API server as on a real cluster.
 */
class NodeUpgradeIsoCanaryIT extends NodeUpgradeScenario {
    private CloudStackFixture cloudStack;
    private SimulatedVersion version;

    NodeUpgradeIsoCanaryIT() {
        super("nucanary");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        cloudStack = CloudStackFixture.forNodes(shared, "nucanary", "CloudManaged", List.of());
        version = cloudStack.simulator().addSupportedVersion("1.35.9");
        // A process halted between a write's sending and its record: the next one waits until CloudStack could no longer
        // take a request it finds no trace of, 20 s here (docs/reliability.md, "Kill points").
        Map<String, String> properties = new java.util.HashMap<>(cloudStack.operatorProperties());
        properties.putAll(CloudStackFixture.SHORT_SIGNATURE_LIFETIME);
        return properties;
    }

    @Override
    protected void finish() {
        if (cloudStack != null) {
            cloudStack.close();
        }
    }

    private String node(boolean controlPlane) {
        String name = controlPlane ? bed.controlPlane(UpgradeBed.FROM) : bed.worker(UpgradeBed.FROM);
        cloudStack.addNodeVm(bed.node(name));
        return name;
    }

    /**
     * Shape: a CKS cluster of one control-plane node and one worker, CloudStackIso, a bed that runs neither CoreDNS nor
     * kube-proxy. Other actor: KWOK, completing the canary's Job without a log.
     */
    @Test
    void aCanaryWithoutAVerdictRefusesTheUpgradeWithNothingCordonedAndItsIsoAttachedAndDetachedOnce() {
        String control = node(true);
        String worker = node(false);
        cloudStack.simulator().clearCalls();
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);

        bed.create("nu-canary", executor, spec -> { });
        NodeUpgrade refused = bed.await("nu-canary", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Failed));

        Condition accepted = Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED).orElseThrow();
        assertThat(accepted.getStatus()).isEqualTo("False");
        assertThat(accepted.getReason()).isEqualTo(IsoCanary.ISO_REFUSED);
        assertThat(accepted.getMessage()).contains("failed the ISO canary on node " + control).contains("without a verdict")
                .contains("Nothing was cordoned");
        String controlVm = cloudStack.vmId(control);
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), controlVm));
        assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(controlVm);
        assertThat(cloudStack.simulator().vm(controlVm).isoId()).isNull();
        IsoCanaryStatus canary = refused.getStatus().getIsoCanary();
        assertThat(canary.getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Failed);
        Job job = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(canary.getJobName()).get();
        assertThat(job.getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_ISO_CANARY, control).doesNotContainKey(UpgradeJob.LABEL_NODE);
        assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand())
                .endsWith("1.35.9", "--without", "coredns", "--without", "kube-proxy");
        assertThat(kubelets.jobsOn(List.of(control, worker))).as("no upgrade Job").isEmpty();
        assertThat(bed.events("nu-canary")).noneMatch(e -> e.getReason().equals(dev.cks.nodeops.operation.OperationRecorder.CORDONED));
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }
    private UpgradeExecutor cloudStackIso() {
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);
        return executor;
    }

    /** The NodeUpgrade once its canary's Job on {@code node} is made and recorded. */
    private NodeUpgrade canaryJobOn(String upgrade, String node) {
        return bed.await(upgrade, Duration.ofSeconds(60), u -> u.getStatus().getIsoCanary() != null && node.equals(u.getStatus().getIsoCanary().getNode())
                && u.getStatus().getIsoCanary().getJobName() != null);
    }

    private List<String> isoCalls(String command) {
        return cloudStack.simulator().calls(command).stream().map(c -> c.param("virtualmachineid")).toList();
    }

    /**
     * Shape: a CKS cluster's two workers (the bed's API server is at the target's minor), CloudStackIso, the pods on both
     * held running so that each canary Job runs until the test acts. Keys: the CKS cluster owner's account keys, which may
     * attach and detach ISOs. Other actor: CKS scaling the cluster in (or a person's kubectl delete node), deleting the
     * canary's node while its canary runs, then the next one's. The canary starts again on the second worker, each VM's
     * ISO is attached and detached once, and with no node left the NodeUpgrade ends Succeeded, both nodes skipped.
     */
    @Test
    void theCanarysNodeDeletedMidCanaryMovesTheCanaryAndEachVmsIsoIsAttachedAndDetachedOnce() {
        List<String> workers = twoWorkers();
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        try (PodsKeptRunning first = new PodsKeptRunning(bed.client, w1, TestBed.OPERATOR_NAMESPACE);
                PodsKeptRunning second = new PodsKeptRunning(bed.client, w2, TestBed.OPERATOR_NAMESPACE)) {
            cloudStack.simulator().clearCalls();
            bed.create("nu-canary-moves", cloudStackIso(), spec -> { });
            canaryJobOn("nu-canary-moves", w1);

            bed.client.nodes().withName(w1).delete();
            canaryJobOn("nu-canary-moves", w2);
            bed.client.nodes().withName(w2).delete();
            NodeUpgrade done = bed.await("nu-canary-moves", Duration.ofSeconds(90), phase(NodeUpgradeStatus.Phase.Succeeded));

            assertThat(done.getStatus().getNodes()).allSatisfy(n -> {
                assertThat(n.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Skipped);
                assertThat(n.getSkipReason()).contains("Node object was deleted");
            });
        }
        String vm1 = cloudStack.vmId(w1);
        String vm2 = cloudStack.vmId(w2);
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), vm1), tuple(version.isoId(), vm2));
        assertThat(isoCalls("detachIso")).containsExactly(vm1, vm2);
        assertThat(cloudStack.simulator().vm(vm1).isoId()).isNull();
        assertThat(cloudStack.simulator().vm(vm2).isoId()).isNull();
        org.awaitility.Awaitility.await("the move reported").atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(bed.events("nu-canary-moves"))
                .filteredOn(e -> e.getReason().equals(IsoCanary.CANARY_MOVED)).singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains("on node " + w1).contains("starts again on node " + w2)));
        assertThat(kubelets.jobsOn(workers)).as("no upgrade Job").isEmpty();
        assertThat(bed.events("nu-canary-moves")).noneMatch(e -> e.getReason().equals(dev.cks.nodeops.operation.OperationRecorder.CORDONED));
    }

    /**
     * Shape: a CKS cluster of one control-plane node (the canary's, its pods held running) and one worker, CloudStackIso.
     * Keys: the CKS cluster owner's account keys. Other actor: a GitOps tool pruning the canary's Job with
     * --cascade=foreground (Argo CD's default), then a person running kubectl delete job on the Job made once more. The
     * first deletion makes the check run once more with a Warning; the second leaves the verdict unknown: the NodeUpgrade
     * fails with nothing cordoned, and the VM's ISO was attached and detached once.
     */
    @Test
    void aCanaryJobDeletedIsMadeOnceMoreAndDeletedAgainFailsTheUpgradeWithTheIsoDetachedOnce() {
        String control = node(true);
        String worker = node(false);
        var jobs = bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE);
        try (PodsKeptRunning running = new PodsKeptRunning(bed.client, control, TestBed.OPERATOR_NAMESPACE)) {
            cloudStack.simulator().clearCalls();
            bed.create("nu-canary-job-deleted", cloudStackIso(), spec -> { });
            String first = canaryJobOn("nu-canary-job-deleted", control).getStatus().getIsoCanary().getJobName();

            jobs.withName(first).withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.FOREGROUND).delete();
            String second = bed.await("nu-canary-job-deleted", Duration.ofSeconds(60), u -> !first.equals(u.getStatus().getIsoCanary().getJobName()))
                    .getStatus().getIsoCanary().getJobName();
            org.awaitility.Awaitility.await("the deletion reported").atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                    bed.events("nu-canary-job-deleted")).filteredOn(e -> e.getReason().equals(IsoCanary.CANARY_JOB_DELETED)).singleElement()
                    .satisfies(e -> assertThat(e.getMessage()).contains(first).contains("runs once more").contains(second)));
            jobs.withName(second).delete();
            NodeUpgrade failed = bed.await("nu-canary-job-deleted", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Failed));

            assertThat(UpgradeBed.nodeStatus(failed, control).getError()).contains(second).contains("verdict is unknown")
                    .contains(dev.cks.nodeops.common.NodeAnnotations.RETRY);
            assertThat(Conditions.find(failed.getStatus().getConditions(), Conditions.ISO_VERIFIED)).hasValueSatisfying(c -> {
                assertThat(c.getStatus()).isEqualTo("Unknown");
                assertThat(c.getReason()).isEqualTo(IsoCanary.CANARY_JOB_DELETED);
            });
        }
        String controlVm = cloudStack.vmId(control);
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), controlVm));
        assertThat(isoCalls("detachIso")).containsExactly(controlVm);
        assertThat(cloudStack.simulator().vm(controlVm).isoId()).isNull();
        assertThat(kubelets.jobsOn(List.of(control, worker))).as("no upgrade Job").isEmpty();
        assertThat(bed.events("nu-canary-job-deleted")).noneMatch(e -> e.getReason().equals(dev.cks.nodeops.operation.OperationRecorder.CORDONED));
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    /**
     * The canary's Job on {@code node}, once its pod runs (held so by {@link PodsKeptRunning}, until the test lets it end):
     * the log served for it is what verify-iso.sh prints for {@code iso} with the Job's own arguments (the target, any
     * --without), as that node would.
     */
    private ServedPodLog serveTheCanarysVerdict(String upgrade, String node, UnpackedIso iso) throws IOException, InterruptedException {
        String jobName = canaryJobOn(upgrade, node).getStatus().getIsoCanary().getJobName();
        Job job = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).get();
        List<String> command = job.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand();
        // sh -c <launcher> <Job name> <the script's arguments>
        List<String> arguments = command.subList(4, command.size());
        Pod pod = Awaitility.await("the pod of canary Job " + jobName + " running").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> testBed.client().pods().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel("job-name", jobName).list().getItems().stream()
                        .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())).findFirst().orElse(null), p -> p != null);
        return ServedPodLog.serve(testBed, pod, iso.verify(arguments));
    }

    /** Something the test does while the canary moves; it may throw (a halted operator's output read). */
    private interface MidMove {
        void run() throws Exception;
    }

    /**
     * NodeUpgrade {@code name} of two workers, CloudStackIso, the pods on both held running: {@code beforeCreate}, the
     * canary's node (the first) deleted mid-canary, {@code afterDelete}, then the moved canary's log on the second worker
     * served with what verify-iso.sh prints for a complete ISO of the target, its pods let end, and the NodeUpgrade
     * awaited to Succeeded. {@code canaryJobs} watches the canary Jobs made meanwhile.
     */
    private NodeUpgrade canaryMovedThenPassed(String name, List<String> workers, Path scratch, CanaryJobs canaryJobs, MidMove beforeCreate,
            MidMove afterDelete) throws Exception {
        UnpackedIso iso = new UnpackedIso(scratch.resolve("iso"), java.nio.file.Files.createDirectories(scratch.resolve("bin")), "1.35.9");
        try (PodsKeptRunning first = new PodsKeptRunning(bed.client, workers.get(0), TestBed.OPERATOR_NAMESPACE);
                PodsKeptRunning second = new PodsKeptRunning(bed.client, workers.get(1), TestBed.OPERATOR_NAMESPACE);
                var watch = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_ISO_CANARY)
                        .watch(canaryJobs)) {
            cloudStack.simulator().clearCalls();
            beforeCreate.run();
            bed.create(name, cloudStackIso(), spec -> { });
            canaryJobOn(name, workers.get(0));

            bed.client.nodes().withName(workers.get(0)).delete();
            afterDelete.run();
            try (ServedPodLog log = serveTheCanarysVerdict(name, workers.get(1), iso)) {
                second.letEnd(TestBed.OPERATOR_NAMESPACE);
                return bed.await(name, Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Succeeded));
            }
        }
    }

    /**
     * The canary moved once from the first worker (its Node deleted) to the second, passed there with one verdict, and the
     * second worker was upgraded: the canary's ISO on and off each VM once, the second worker's upgrade's once more; one Job
     * per canary name, one canary Job per node; one upgrade Job; nothing left cordoned.
     */
    private void assertMovedOncePassedAndTheNextUpgraded(String name, NodeUpgrade done, List<String> workers, CanaryJobs canaryJobs) {
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        assertThat(UpgradeBed.nodeStatus(done, w1).getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Skipped);
        assertThat(UpgradeBed.nodeStatus(done, w1).getSkipReason()).contains("Node object was deleted");
        assertThat(UpgradeBed.nodeStatus(done, w2).getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Succeeded);
        assertThat(UpgradeBed.nodeStatus(done, w2).getVersion()).isEqualTo(UpgradeBed.TARGET);
        IsoCanaryStatus canary = done.getStatus().getIsoCanary();
        assertThat(canary.getNode()).isEqualTo(w2);
        assertThat(canary.getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        assertThat(canary.getChecked()).contains("kubeadm: k8s/kubeadm is v1.35.9");
        assertThat(Conditions.find(done.getStatus().getConditions(), Conditions.ISO_VERIFIED)).hasValueSatisfying(c -> {
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo(IsoCanary.ISO_PASSED);
            assertThat(c.getMessage()).contains("checked on node " + w2);
        });
        String vm1 = cloudStack.vmId(w1);
        String vm2 = cloudStack.vmId(w2);
        assertThat(cloudStack.simulator().calls("attachIso")).as("the canary's on each VM, then the second worker's upgrade's")
                .extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), vm1), tuple(version.isoId(), vm2), tuple(version.isoId(), vm2));
        assertThat(isoCalls("detachIso")).as("the canary's on each VM, then the second worker's upgrade's").containsExactly(vm1, vm2, vm2);
        assertThat(cloudStack.simulator().vm(vm1).isoId()).isNull();
        assertThat(cloudStack.simulator().vm(vm2).isoId()).isNull();
        assertThat(canaryJobs.made).as("one Job per canary name, one canary per node").hasSize(2)
                .allSatisfy((job, uids) -> assertThat(uids).as(job).hasSize(1));
        assertThat(canaryJobs.made.keySet()).anySatisfy(job -> assertThat(job).contains(w1)).anySatisfy(job -> assertThat(job).contains(w2));
        assertThat(kubelets.jobsOn(workers)).as("one upgrade Job, the second worker's")
                .extracting(dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob::node).containsExactly(w2);
        assertThat(bed.events(name)).filteredOn(e -> e.getReason().equals(IsoCanary.CANARY_MOVED)).as("moved once").singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains("on node " + w1).contains("starts again on node " + w2));
        assertThat(bed.events(name)).filteredOn(e -> e.getReason().equals(IsoCanary.ISO_PASSED)).as("one verdict").singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains("checked on node " + w2));
        bed.assertReleased(w2, false);
    }

    /**
     * Shape: a CKS cluster's two workers (the bed's API server is at the target's minor), CloudStackIso, the pods on both
     * held running until the test lets them end. Keys: the CKS cluster owner's account keys. Other actor: CKS scaling the
     * cluster in (or a person's kubectl delete node), deleting the canary's node while its canary runs. The canary starts
     * again on the second worker; its Job's log, served by KWOK, is what verify-iso.sh prints for a complete ISO of the
     * target: the verdict passes, and the second worker is upgraded to the end. The canary's ISO goes on and off each VM
     * once, the second worker's upgrade attaches and detaches it once more, and nothing is left cordoned.
     */
    @Test
    void aCanaryMovedByItsNodesDeletionPassesOnTheNextNodeWhichIsThenUpgraded(@TempDir Path scratch) throws Exception {
        List<String> workers = twoWorkers();
        CanaryJobs canaryJobs = new CanaryJobs("nu-canary-passes");

        NodeUpgrade done = canaryMovedThenPassed("nu-canary-passes", workers, scratch, canaryJobs, () -> { }, () -> { });

        assertMovedOncePassedAndTheNextUpgraded("nu-canary-passes", done, workers, canaryJobs);
    }

    private List<String> twoWorkers() {
        List<String> workers = bed.twoWorkersInPlanOrder(UpgradeBed.FROM);
        workers.forEach(w -> cloudStack.addNodeVm(bed.node(w)));
        return workers;
    }

    /**
     * Shape: a CKS cluster's worker, CloudStackIso, its pods held running until the test lets them end. Keys: the CKS
     * cluster owner's account keys. Other actor: whoever registered the target's ISO without etcd's image archive; the
     * canary Job's log, served by KWOK, is what verify-iso.sh prints for that ISO. The NodeUpgrade is refused naming the
     * missing archive, with nothing cordoned and the VM's ISO attached and detached once.
     */
    @Test
    void aBadVerdictInTheCanarysLogRefusesTheUpgradeWithNothingCordoned(@TempDir Path scratch) throws Exception {
        String worker = node(false);
        UnpackedIso iso = new UnpackedIso(scratch.resolve("iso"), java.nio.file.Files.createDirectories(scratch.resolve("bin")), "1.35.9");
        iso.delete("docker/etcd:3.5.21-0.tar");
        NodeUpgrade refused;
        try (PodsKeptRunning running = new PodsKeptRunning(bed.client, worker, TestBed.OPERATOR_NAMESPACE)) {
            cloudStack.simulator().clearCalls();
            bed.create("nu-canary-bad", cloudStackIso(), spec -> { });
            try (ServedPodLog log = serveTheCanarysVerdict("nu-canary-bad", worker, iso)) {
                running.letEnd(TestBed.OPERATOR_NAMESPACE);
                refused = bed.await("nu-canary-bad", Duration.ofSeconds(90), phase(NodeUpgradeStatus.Phase.Failed));
            }
        }

        Condition accepted = Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED).orElseThrow();
        assertThat(accepted.getStatus()).isEqualTo("False");
        assertThat(accepted.getReason()).isEqualTo(IsoCanary.ISO_REFUSED);
        assertThat(accepted.getMessage()).contains("failed the ISO canary on node " + worker).contains("images: no archive for docker/etcd:3.5.21-0.tar")
                .contains("Nothing was cordoned");
        assertThat(refused.getStatus().getIsoCanary().getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Failed);
        String vm = cloudStack.vmId(worker);
        assertThat(isoCalls("attachIso")).containsExactly(vm);
        assertThat(isoCalls("detachIso")).containsExactly(vm);
        assertThat(cloudStack.simulator().vm(vm).isoId()).isNull();
        assertThat(kubelets.jobsOn(List.of(worker))).as("no upgrade Job").isEmpty();
        assertThat(bed.events("nu-canary-bad")).noneMatch(e -> e.getReason().equals(dev.cks.nodeops.operation.OperationRecorder.CORDONED));
        bed.assertReleased(worker, false);
    }

    /**
     * Shape: a CKS cluster's two workers, CloudStackIso, the pods on both held running until the test lets them end. Keys:
     * the CKS cluster owner's account keys. Other actors: CKS scaling the cluster in (or a person's kubectl delete node),
     * deleting the canary's node mid-canary; and the death of the operator's process (halted at the point as by SIGKILL)
     * while the canary moves: after the first node's detachIso was answered, before its job is recorded; after the given-up
     * canary's Job was deleted again as the canary moves on, before the move is recorded; after the second node's canary
     * Job was created, before its name is recorded. A new process carries on from status: the canary ends on the second
     * worker with one verdict (passed, its Job's log served by KWOK), each canary's ISO attached and detached once per VM,
     * one Job per canary name, the second worker upgraded and nothing left cordoned.
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"nodeupgrade.canary.detach-answered@1", "nodeupgrade.canary.job-deleted@2", "nodeupgrade.canary.job-created@2"})
    void haltedWhileTheCanaryMovesANewProcessMovesItOnceAndTheNextNodeIsUpgraded(String point, @TempDir Path scratch) throws Exception {
        List<String> workers = twoWorkers();
        String name = "nu-canary-halt-" + point.substring("nodeupgrade.canary.".length()).replace('@', '-');
        CanaryJobs canaryJobs = new CanaryJobs(name);

        NodeUpgrade done = canaryMovedThenPassed(name, workers, scratch, canaryJobs, () -> restartHaltingAt(point),
                () -> awaitHaltedAndRestart(point, Duration.ofSeconds(90)));

        assertMovedOncePassedAndTheNextUpgraded(name, done, workers, canaryJobs);
    }

    /**
     * Shape: a CKS cluster's worker, CloudStackIso, its pods held running until the test lets them end. Keys: the CKS
     * cluster owner's account keys. Other actor: the death of the operator's process (halted at the point as by SIGKILL)
     * while the canary judges the ISO: after its attach intent was written, before attachIso is sent; after attachIso was
     * answered, before its job is recorded; after the attach job was seen done, before Attached is recorded; after the
     * verdict was read from the Job's log (served by KWOK), before it is recorded; after the detach job was seen done,
     * before Detached and the verdict's condition are recorded. A new process carries on from status: one verdict
     * (passed), the canary's ISO attached and detached once, then the upgrade's once, one canary Job, the node upgraded
     * and nothing left cordoned.
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"nodeupgrade.canary.attach-intent", "nodeupgrade.canary.attach-answered", "nodeupgrade.canary.attached",
            "nodeupgrade.canary.verdict-read", "nodeupgrade.canary.detached"})
    void haltedWhileTheCanaryJudgesANewProcessJudgesOnceAndTheNodeIsUpgraded(String point, @TempDir Path scratch) throws Exception {
        String worker = node(false);
        String name = "nu-canary-halt-" + point.substring("nodeupgrade.canary.".length());
        CanaryJobs canaryJobs = new CanaryJobs(name);
        UnpackedIso iso = new UnpackedIso(scratch.resolve("iso"), java.nio.file.Files.createDirectories(scratch.resolve("bin")), "1.35.9");
        // The attach's points come before the canary's Job exists; the verdict's and the detach's after its log is served.
        boolean beforeTheJob = point.contains("attach");
        NodeUpgrade done;
        try (PodsKeptRunning running = new PodsKeptRunning(bed.client, worker, TestBed.OPERATOR_NAMESPACE);
                var watch = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_ISO_CANARY)
                        .watch(canaryJobs)) {
            cloudStack.simulator().clearCalls();
            restartHaltingAt(point);
            bed.create(name, cloudStackIso(), spec -> { });
            if (beforeTheJob) {
                awaitHaltedAndRestart(point, Duration.ofSeconds(90));
            }
            try (ServedPodLog log = serveTheCanarysVerdict(name, worker, iso)) {
                running.letEnd(TestBed.OPERATOR_NAMESPACE);
                if (!beforeTheJob) {
                    awaitHaltedAndRestart(point, Duration.ofSeconds(90));
                }
                done = bed.await(name, Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Succeeded));
            }
        }

        assertThat(UpgradeBed.nodeStatus(done, worker).getVersion()).isEqualTo(UpgradeBed.TARGET);
        IsoCanaryStatus canary = done.getStatus().getIsoCanary();
        assertThat(canary.getNode()).isEqualTo(worker);
        assertThat(canary.getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Passed);
        String vm = cloudStack.vmId(worker);
        assertThat(isoCalls("attachIso")).as("the canary's, then the upgrade's").containsExactly(vm, vm);
        assertThat(isoCalls("detachIso")).as("the canary's, then the upgrade's").containsExactly(vm, vm);
        assertThat(cloudStack.simulator().vm(vm).isoId()).isNull();
        assertThat(canaryJobs.made).as("one canary Job").hasSize(1).allSatisfy((job, uids) -> assertThat(uids).as(job).hasSize(1));
        assertThat(kubelets.jobsOn(List.of(worker))).as("one upgrade Job").hasSize(1);
        assertThat(bed.events(name)).filteredOn(e -> e.getReason().equals(IsoCanary.ISO_PASSED)).as("one verdict").hasSize(1);
        bed.assertReleased(worker, false);
    }

    /** The canary Jobs of one NodeUpgrade made while it watched, by name: the uid of each Job made under it. */
    private static final class CanaryJobs implements io.fabric8.kubernetes.client.Watcher<Job> {
        final Map<String, java.util.Set<String>> made = new java.util.concurrent.ConcurrentHashMap<>();
        private final String nodeUpgrade;

        CanaryJobs(String nodeUpgrade) {
            this.nodeUpgrade = nodeUpgrade;
        }

        @Override
        public void eventReceived(Action action, Job job) {
            if (!nodeUpgrade.equals(job.getMetadata().getAnnotations().get(UpgradeJob.ANNOTATION_NODEUPGRADE))) {
                return;
            }
            made.computeIfAbsent(job.getMetadata().getName(), n -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add(job.getMetadata().getUid());
        }

        @Override
        public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
        }
    }
}
