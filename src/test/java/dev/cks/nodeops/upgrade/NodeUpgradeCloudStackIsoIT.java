package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.TARGET;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.audit.VMMapAuditStatus;
import dev.cks.nodeops.audit.VmMapFinding;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.dsl.Resource;
import org.awaitility.Awaitility;

/** The CKS way: the version's binaries ISO attached to each VM around a Job running CKS's node script, against the CloudStack simulator. */
class NodeUpgradeCloudStackIsoIT extends NodeUpgradeScenario {
    private CloudStackFixture cloudStack;
    private SimulatedVersion version;
    private Map<String, String> operatorProperties;

    NodeUpgradeCloudStackIsoIT() {
        super("nuiso");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        // The CKS cluster's VM map gets each test's nodes as they are created.
        cloudStack = CloudStackFixture.forNodes(shared, "nuiso", "CloudManaged", List.of());
        version = cloudStack.simulator().addSupportedVersion("1.35.9");
        // Halted between an attach's intent and its sending, a new process waits until CloudStack could no longer take it.
        operatorProperties = new java.util.HashMap<>(cloudStack.operatorProperties());
        operatorProperties.putAll(CloudStackFixture.SHORT_SIGNATURE_LIFETIME);
        // These tests are about each node's attach, Job and detach, and their CloudStack call counts are each node's alone. The
        // bed serves a pod's log only where a test has KWOK serve one (ServedPodLog), so the canary would reach no verdict here:
        // NodeUpgradeIsoCanaryIT runs it on this bed with its verdicts served, and the reconciler's unit tests and the real node.
        operatorProperties.put("cks.upgrade.iso-canary", "false");
        return operatorProperties;
    }

    @Override
    protected void finish() {
        if (cloudStack != null) {
            cloudStack.close();
        }
    }

    private String node(boolean controlPlane) {
        String name = controlPlane ? bed.controlPlane(FROM) : bed.worker(FROM);
        cloudStack.addNodeVm(bed.node(name));
        return name;
    }

    private static UpgradeExecutor iso() {
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);
        return executor;
    }

    @Test
    void attachesTheTargetVersionsIsoToEachVmRunsTheNodeScriptAndDetachesIt() {
        String control = node(true);
        String worker = node(false);
        cloudStack.simulator().clearCalls();

        bed.create("nu-iso", iso(), spec -> { });
        NodeUpgrade done = bed.await("nu-iso", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Succeeded));

        String controlVm = cloudStack.vmId(control);
        String workerVm = cloudStack.vmId(worker);
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), controlVm), tuple(version.isoId(), workerVm));
        assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(controlVm, workerVm);
        assertThat(cloudStack.simulator().vm(controlVm).isoId()).isNull();
        assertThat(cloudStack.simulator().vm(workerVm).isoId()).isNull();
        assertThat(done.getStatus().getClusterId()).isEqualTo(cloudStack.cluster().id());
        assertThat(nodeStatus(done, control).getVmId()).isEqualTo(controlVm);
        assertThat(nodeStatus(done, worker).getVersion()).isEqualTo(TARGET);

        ConfigMap script = testBed.client().configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(CloudStackIsoExecutor.SCRIPT_CONFIGMAP).get();
        assertThat(script.getData().get(CloudStackIsoExecutor.SCRIPT_KEY)).contains("kubeadm upgrade apply");
        Job controlJob = job(nodeStatus(done, control).getJobName());
        Job workerJob = job(nodeStatus(done, worker).getJobName());
        assertThat(controlJob.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).endsWith("1.35.9", "true", "false", "false", "true");
        assertThat(workerJob.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).endsWith("1.35.9", "false", "false", "false", "true");
        // The bed's kubelets run no script, so the control-plane Job's log holds no addon line: the node is upgraded all
        // the same and its addons are unknown, said in the condition; the worker's Job is not asked about addons.
        assertThat(nodeStatus(done, control).getAddons()).startsWith("unknown");
        assertThat(nodeStatus(done, worker).getAddons()).isNull();
        assertThat(done.getStatus().getConditions()).filteredOn(c -> c.getType().equals("AddonsApplied")).singleElement()
                .satisfies(c -> assertThat(c.getReason()).isEqualTo("AddonsUnknown"));
        assertThat(controlJob.getSpec().getTemplate().getSpec().getVolumes()).filteredOn(v -> v.getConfigMap() != null)
                .extracting(v -> v.getConfigMap().getName()).containsExactly(CloudStackIsoExecutor.SCRIPT_CONFIGMAP);
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    @Test
    void killedRightAfterCloudStackTookTheAttachAndTheDetachItAttachesAndDetachesEachVmOnce() {
        String control = node(true);
        String worker = node(false);
        CloudStackSimulator simulator = cloudStack.simulator();
        simulator.clearCalls();
        int earlierJobs = simulator.jobCommands().size();
        // The first attach and the first detach: CloudStack takes the request and runs its job, but the
        // answer with the job id never reaches the operator, which is then killed. The attach still runs
        // when the next operator looks; the detach is done by then.
        simulator.planJob("attachIso", JobOutcome.succeedsAfter(Duration.ofSeconds(40)));
        simulator.injectFault("attachIso", Fault.answerLost());
        simulator.planJob("detachIso", JobOutcome.succeedsAfter(Duration.ofSeconds(1)));
        simulator.injectFault("detachIso", Fault.answerLost());

        bed.create("nu-iso-killed", iso(), spec -> { });
        killOnceCloudStackRuns("attachIso");
        // The attach's job names the VM: the new operator finds it among the account's running jobs and follows it.
        bed.await("nu-iso-killed", Duration.ofSeconds(40), u -> u.getStatus() != null && (nodeStatus(u, control).getIsoJobId() != null
                || nodeStatus(u, control).getIsoState() == UpgradeNodeStatus.IsoState.Attached));
        killOnceCloudStackRuns("detachIso");
        NodeUpgrade done = bed.await("nu-iso-killed", Duration.ofSeconds(180), phase(NodeUpgradeStatus.Phase.Succeeded));

        assertEachVmAttachedAndDetachedOnce(control, worker, earlierJobs);
        assertThat(simulator.calls("listAsyncJobs")).as("the restarted operator looked the lost jobs up").isNotEmpty();
        assertThat(nodeStatus(done, control).getVersion()).isEqualTo(TARGET);
        assertThat(nodeStatus(done, worker).getVersion()).isEqualTo(TARGET);
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    /**
     * The operator process halts (as on SIGKILL) right after each step of the ISO's side effects, before its record
     * (docs/reliability.md); a new process finishes the upgrade from what the API server and CloudStack show:
     * CloudStack attached and detached each VM's ISO once, one Job per node, every node given back.
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"nodeupgrade.iso.attach-intent", "nodeupgrade.script-written", "nodeupgrade.iso.attach-answered", "nodeupgrade.iso.attached",
        "nodeupgrade.iso.detach-answered", "nodeupgrade.iso.detached"})
    void haltedRightAfterAnIsoStepANewProcessAttachesAndDetachesEachVmOnce(String point) throws java.io.IOException {
        String control = node(true);
        String worker = node(false);
        CloudStackSimulator simulator = cloudStack.simulator();
        simulator.clearCalls();
        int earlierJobs = simulator.jobCommands().size();
        // CloudStack's jobs run to their end whether or not anybody polls them: the halted operator does not.
        simulator.setDefaultJobOutcome(JobOutcome.succeedsAfter(Duration.ofSeconds(2)));
        try {
            String name = "nu-iso-halt-" + point.substring(point.lastIndexOf('.') + 1);
            restartHaltingAt(point);
            bed.create(name, iso(), spec -> { });
            awaitHaltedAndRestart(point, Duration.ofSeconds(120));
            NodeUpgrade done = bed.await(name, Duration.ofSeconds(180), phase(NodeUpgradeStatus.Phase.Succeeded));

            assertEachVmAttachedAndDetachedOnce(control, worker, earlierJobs);
            assertThat(kubelets.jobsOn(List.of(control, worker))).as("one upgrade Job per node")
                    .extracting(dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob::node).containsExactlyInAnyOrder(control, worker);
            assertThat(done.getStatus().getNodes()).extracting(UpgradeNodeStatus::getPhase).containsOnly(UpgradeNodeStatus.Phase.Succeeded);
            bed.nodes.forEach(n -> bed.assertReleased(n, false));
            if (point.endsWith("-intent")) {
                assertThat(bed.events(name)).as("the unsent attach sent once CloudStack could no longer take the recorded request")
                        .extracting(io.fabric8.kubernetes.api.model.Event::getReason).contains("RequestResent");
            }
        } finally {
            simulator.setDefaultJobOutcome(JobOutcome.succeedsAfterPolls(1));
        }
    }

    /** CloudStack was asked once to attach and once to detach each node's VM, ran one job of each, and no ISO is left. */
    private void assertEachVmAttachedAndDetachedOnce(String control, String worker, int earlierJobs) {
        CloudStackSimulator simulator = cloudStack.simulator();
        String controlVm = cloudStack.vmId(control);
        String workerVm = cloudStack.vmId(worker);
        assertThat(simulator.calls("attachIso")).as("one attach per VM").extracting(c -> c.param("virtualmachineid"))
                .containsExactly(controlVm, workerVm);
        assertThat(simulator.calls("detachIso")).as("one detach per VM").extracting(c -> c.param("virtualmachineid"))
                .containsExactly(controlVm, workerVm);
        assertThat(simulator.jobCommands().subList(earlierJobs, simulator.jobCommands().size()))
                .filteredOn(command -> command.equals("attachIso") || command.equals("detachIso"))
                .containsExactly("attachIso", "detachIso", "attachIso", "detachIso");
        assertThat(simulator.vm(controlVm).isoId()).isNull();
        assertThat(simulator.vm(workerVm).isoId()).isNull();
    }

    /** SIGKILLs the operator as soon as CloudStack has a job of this command, then starts another. */
    private void killOnceCloudStackRuns(String command) {
        Awaitility.await("CloudStack running " + command).atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(50))
                .until(() -> !cloudStack.simulator().calls(command).isEmpty());
        operator.kill();
        operator.expireItsLease();
        operator = OperatorProcess.start(testBed, "nodeupgrade-nuiso-after-" + command, operatorProperties);
    }

    @Test
    void detachesTheIsoAlsoWhenTheJobFails() {
        String worker = node(false);
        String vm = cloudStack.vmId(worker);
        cloudStack.simulator().clearCalls();
        try (PodsHeldOffNode held = new PodsHeldOffNode(testBed.client(), worker, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-iso-fail", iso(), spec -> spec.getExecutor().setJobTimeoutSeconds(3));
            NodeUpgrade failed = bed.await("nu-iso-fail", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Failed));

            assertThat(nodeStatus(failed, worker).getError()).contains("DeadlineExceeded");
            assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(vm);
            assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(vm);
            assertThat(cloudStack.simulator().vm(vm).isoId()).isNull();
            bed.assertReleased(worker, false);
        }
    }

    /**
     * Shape: a CKS cluster, CloudStackIso, one worker upgraded by a Continuous NodeUpgrade's rollout. Actor: CKS scaling
     * the cluster up afterwards (a person's scaleKubernetesCluster or its autoscaler): the new worker joins at the version
     * CloudStack records, its VM in the cluster's map with that version (kubernetes_cluster_vm_map), as every scale-up
     * after an upgrade CloudStack did not do. It is corrected like a rollout's node, its VM getting the target's ISO once
     * and losing it once, and the NodeUpgrade then says that CloudStack still records the old version for it.
     */
    @Test
    void aWorkerJoiningAtTheVersionCloudStackRecordsIsCorrectedWithOneAttachAndOneDetach() {
        String w1 = node(false);
        bed.create("nu-iso-hold", iso(), spec -> {
            spec.setMode(UpgradeMode.Continuous);
            spec.setHoldIntervalSeconds(120);
        });
        bed.await("nu-iso-hold", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Holding));
        cloudStack.simulator().clearCalls();

        String joiner = node(false);
        String joinerVm = cloudStack.vmId(joiner);
        assertThat(cloudStack.simulator().vm(joinerVm).nodeVersion()).as("CloudStack records the old version for the joiner").isEqualTo(FROM.substring(1));
        NodeUpgrade held = bed.await("nu-iso-hold", Duration.ofSeconds(180), u -> u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Holding
                && u.getStatus().getHold() != null && joiner.equals(u.getStatus().getHold().getLastCorrectedNode()));

        assertThat(nodeStatus(held, joiner)).satisfies(n -> {
            assertThat(n.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Succeeded);
            assertThat(n.getVmId()).isEqualTo(joinerVm);
            assertThat(n.getVersion()).isEqualTo(TARGET);
        });
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), joinerVm));
        assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(joinerVm);
        assertThat(cloudStack.simulator().vm(joinerVm).isoId()).isNull();
        assertThat(held.getStatus().getConditions()).as("CloudStack's record, read again once the correction is done")
                .anySatisfy(c -> {
                    assertThat(c.getType()).isEqualTo(dev.cks.nodeops.common.Conditions.CLOUDSTACK_RECORD_CURRENT);
                    assertThat(c.getStatus()).isEqualTo("False");
                    assertThat(c.getReason()).isEqualTo("VersionRecordStale");
                    assertThat(c.getMessage()).contains(FROM.substring(1) + " for node " + joiner);
                });
        List.of(w1, joiner).forEach(n -> bed.assertReleased(n, false));
    }

    /**
     * Shape: a CKS cluster, CloudStackIso. Actor: a person or a GitOps prune deleting the NodeUpgrade while
     * the node's upgrade Job runs. Before, the node was released and the ISO stayed attached to the VM for good.
     */
    @Test
    void deletedWhileItsJobRunsTheIsoIsDetachedOnceTheJobHasEndedAndOnlyThenTheUpgradeGoes() {
        String worker = node(false);
        String vm = cloudStack.vmId(worker);
        cloudStack.simulator().clearCalls();
        try (PodsHeldOffNode held = new PodsHeldOffNode(testBed.client(), worker, TestBed.OPERATOR_NAMESPACE)) {
            // The Job's pod never runs; the Job ends at its deadline: kubeadm would have been reading the ISO until then.
            bed.create("nu-iso-deleted", iso(), spec -> spec.getExecutor().setJobTimeoutSeconds(25));
            NodeUpgrade running = bed.await("nu-iso-deleted", Duration.ofSeconds(120), u -> u.getStatus() != null
                    && nodeStatus(u, worker).getJobName() != null);
            String jobName = nodeStatus(running, worker).getJobName();
            assertThat(cloudStack.simulator().vm(vm).isoId()).isNotNull();

            // A watch sees every state of the Job, the last one before its deletion too, and counts the detaches at
            // the moment the Job is seen ended: polling with GETs could miss the end when the operator was quicker.
            JobWatch job = new JobWatch();
            try (var watch = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).watch(job)) {
                testBed.client().resource(running).delete();
                bed.await("nu-iso-deleted", Duration.ofSeconds(20), u -> u.getMetadata().getDeletionTimestamp() != null);
                assertThat(cloudStack.simulator().calls("detachIso")).as("not while the Job runs").isEmpty();
                assertThat(bed.get("nu-iso-deleted")).as("kept by its finalizer while the Job runs").isNotNull();

                // The Job ends by its own deadline, not by the garbage collector (it has no owner); detaching waits for that.
                Awaitility.await("the Job ended by its deadline").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                        .until(() -> job.detachesWhenEnded != null || job.deletedWhile != null || job.closedBy != null);
                assertThat(job.closedBy).as("the watch of the Job ended by an error").isNull();
                assertThat(job.deletedWhile instanceof UpgradeJob.Running).as("the Job is not deleted while it runs").isFalse();
                assertThat(job.detachesWhenEnded).as("not detached before the Job ended").isZero();

                Awaitility.await("the NodeUpgrade gone").atMost(Duration.ofSeconds(120)).until(() -> bed.get("nu-iso-deleted") == null);
            }
            assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(vm);
            assertThat(cloudStack.simulator().vm(vm).isoId()).isNull();
            assertThat(testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).get())
                    .as("the finished Job deleted with its NodeUpgrade (by the finalizer)").isNull();
            assertThat(job.deletedWhile).as("deleted once it had ended").isInstanceOf(UpgradeJob.Failed.class);
        }
    }

    /** What a watch of one upgrade Job saw: the detaches counted when it was first seen ended, and its state when deleted. */
    private final class JobWatch implements io.fabric8.kubernetes.client.Watcher<Job> {
        volatile Integer detachesWhenEnded;
        volatile UpgradeJob.Outcome deletedWhile;
        volatile Exception closedBy;

        @Override
        public void eventReceived(Action action, Job job) {
            UpgradeJob.Outcome outcome = UpgradeJob.outcome(job);
            if (detachesWhenEnded == null && !(outcome instanceof UpgradeJob.Running)) {
                detachesWhenEnded = cloudStack.simulator().calls("detachIso").size();
            }
            if (action == Action.DELETED) {
                deletedWhile = outcome;
            }
        }

        @Override
        public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
            closedBy = cause;
        }
    }

    @Test
    void refusesWithASentenceWhenCloudStackHasNoSupportedVersionForTheTarget() {
        String worker = node(false);

        bed.create("nu-iso-noversion", iso(), spec -> spec.setTargetVersion("v1.35.8"));
        NodeUpgrade failed = bed.await("nu-iso-noversion", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Failed));

        assertThat(nodeStatus(failed, worker).getError()).contains("CloudStack has no Kubernetes supported version v1.35.8");
        assertThat(kubelets.jobsOn(List.of(worker))).as("no Job without an ISO").isEmpty();
        assertThat(nodeStatus(failed, worker).getCordonedByUs()).as("refused before the node was cordoned").isNull();
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("virtualmachineid")).doesNotContain(cloudStack.vmId(worker));
        bed.assertReleased(worker, false);
    }

    @Test
    void cloudStacksRecordOfTheNodesVersionIsReportedStaleAfterTheUpgradeAndNotBefore() {
        String worker = node(false);
        String vm = cloudStack.vmId(worker);
        VMMapAudit audit = new VMMapAudit();
        audit.setMetadata(new ObjectMetaBuilder().withName("nuiso-record").build());
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId(cloudStack.cluster().id());
        spec.setIntervalSeconds(30);
        spec.setGracePeriodSeconds(0);
        audit.setSpec(spec);
        Resource<VMMapAudit> audits = testBed.client().resources(VMMapAudit.class).withName("nuiso-record");
        try {
            testBed.client().resource(audit).create();
            assertThat(staleRecords(auditRun(audits, 1))).as("before the upgrade CloudStack's record is right").isEmpty();

            bed.create("nu-iso-record", iso(), s -> { });
            NodeUpgrade upgraded = bed.await("nu-iso-record", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Succeeded));
            assertThat(upgraded.getStatus().getConditions()).as("the NodeUpgrade says CloudStack's record is stale")
                    .filteredOn(c -> c.getType().equals("CloudStackRecordCurrent")).singleElement().satisfies(c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("VersionRecordStale");
                        assertThat(c.getMessage()).contains(FROM.substring(1) + " for node " + worker).contains("upgradeKubernetesCluster");
                    });
            long generation = audits.edit(a -> {
                a.getSpec().setIntervalSeconds(31);
                return a;
            }).getMetadata().getGeneration();

            assertThat(staleRecords(auditRun(audits, generation))).singleElement().satisfies(finding -> {
                assertThat(finding.getVmId()).isEqualTo(vm);
                assertThat(finding.getNode()).isEqualTo(worker);
                assertThat(finding.getMessage()).contains("runs Kubernetes " + TARGET + ", but CloudStack records " + FROM.substring(1));
            });
            assertThat(cloudStack.simulator().vm(vm).nodeVersion()).as("the audit changes nothing").isEqualTo(FROM.substring(1));
        } finally {
            audits.delete();
        }
    }

    private static VMMapAuditStatus auditRun(Resource<VMMapAudit> audit, long generation) {
        return Awaitility.await("the audit run for generation " + generation).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200))
                .until(() -> audit.get().getStatus(), status -> status != null && status.getObservedGeneration() != null
                        && status.getObservedGeneration() >= generation && status.getLastRun() != null);
    }

    private static List<VmMapFinding> staleRecords(VMMapAuditStatus status) {
        return status.getFindings().stream().filter(f -> f.getType() == VmMapFinding.Type.VersionRecordStale).toList();
    }

    private Job job(String name) {
        return testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(name).get();
    }
}
