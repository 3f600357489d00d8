package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.cloudstack.simulator.SimulatedAccount;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The answers the operator relies on, each as Apache CloudStack gives it; the comment on each test
 * names the source it follows (the same rows as the table in docs/cloudstack-simulator.md).
 */
class CloudStackFidelityTest {

    private final ManualTime time = new ManualTime();
    private CloudStackSimulator simulator;
    private CloudStackClient admin;

    @BeforeEach
    void start() {
        simulator = CloudStackSimulator.start(0, time);
        admin = clientFor(simulator.defaultAccount());
    }

    @AfterEach
    void stop() {
        simulator.close();
    }

    private CloudStackClient clientFor(SimulatedAccount account) {
        return new CloudStackClient(simulator.credentials(account), CloudStackClientSettings.DEFAULTS
                .withRetries(RetryPolicy.NONE, RetryPolicy.NONE), new SimpleMeterRegistry(), time, time, () -> 1.0);
    }

    private SimulatedAccount user(String name) {
        return simulator.addAccount(name, CloudStackSimulator.ROOT_DOMAIN_ID, name + "-key-1234", name + "-secret-5678", false);
    }

    private SimulatedCluster externalManaged(String name, Owner owner) {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        return simulator.addCluster(name, owner, "ExternalManaged", version.id());
    }

    private CloudStackException scaleFailure(CloudStackClient client, SimulatedCluster cluster, List<String> nodeIds) {
        return catchThrowableOfType(CloudStackException.class, () -> client.scaleKubernetesCluster(cluster.id(), nodeIds));
    }

    // ---- listKubernetesClusters: KubernetesClusterManagerImpl.createKubernetesClusterResponse -------------------

    @Test
    void clusterRowsCarryNicDetailsOnlyPlusTheNodesRecord() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), "CloudManaged", version.id());
        SimulatedVm worker = simulator.addClusterVm(cluster, "prod-node-1", NodeRole.WORKER);
        SimulatedVm etcd = simulator.addClusterVm(cluster, "prod-etcd-1", NodeRole.ETCD);
        SimulatedVm external = simulator.addExternalNode(cluster, "byo-node-1");
        admin.attachIso(version.isoId(), worker.id());

        KubernetesCluster found = admin.findKubernetesCluster(cluster.id()).orElseThrow();

        // EnumSet.of(VMDetails.nics): no ISO even though one is attached (UserVmJoinDaoImpl fills isoid for iso/all only).
        assertThat(found.virtualMachines()).allSatisfy(vm -> assertThat(vm.isoId()).isNull())
                .allSatisfy(vm -> assertThat(vm.templateId()).isNull())
                .allSatisfy(vm -> assertThat(vm.kubernetesNodeVersion()).isEqualTo("1.33.1"));
        assertThat(found.virtualMachines()).filteredOn(VirtualMachine::isEtcdNode).extracting(VirtualMachine::id).containsExactly(etcd.id());
        assertThat(found.virtualMachines()).filteredOn(VirtualMachine::isExternalNode).extracting(VirtualMachine::id)
                .containsExactly(external.id());
        assertThat(found.etcdNodes()).isEqualTo(1L);
        // ...while listVirtualMachines with the iso detail does carry it.
        assertThat(admin.findVirtualMachine(OwnerScope.of(found), worker.id())).get()
                .extracting(VirtualMachine::isoId).isEqualTo(version.isoId());
    }

    @Test
    void anIdThatNeverExistedIsRefusedAndReadAsNoCluster() {
        // ParamProcessWorker.translateUuidToInternalId: 431 before the command runs.
        assertThat(admin.findKubernetesCluster("0000dead-0000-4000-8000-00000000beef")).isEmpty();
        assertThat(simulator.calls("listKubernetesClusters")).hasSize(1);
    }

    // ---- listVirtualMachines: ListVMsCmd, UserVmJoinDaoImpl.newUserVmResponse ---------------------------------

    @Test
    void anExpungedVmIsNotListedButItsIdIsStillKnown() {
        SimulatedVm vm = simulator.addVm("gone", Owner.of(simulator.defaultAccount()));
        simulator.destroyVm(vm.id(), true);

        assertThat(admin.findVirtualMachine(OwnerScope.CALLER, vm.id())).isEmpty();
        assertThat(simulator.calls("listVirtualMachines")).singleElement()
                .satisfies(call -> assertThat(call.params()).containsEntry("details", "iso").containsEntry("id", vm.id()));
    }

    @Test
    void onlyARootAdminSeesTheHypervisorHost() {
        SimulatedAccount tenant = user("tenant");
        SimulatedVm vm = simulator.addVm("tenant-vm", Owner.of(tenant));

        assertThat(clientFor(tenant).findVirtualMachine(OwnerScope.CALLER, vm.id())).get()
                .satisfies(seen -> assertThat(seen.hostName()).isNull()).satisfies(seen -> assertThat(seen.instanceName()).isNull());
        assertThat(admin.findVirtualMachine(OwnerScope.account("tenant", CloudStackSimulator.ROOT_DOMAIN_ID), vm.id())).get()
                .satisfies(seen -> assertThat(seen.hostName()).isNotNull());
    }

    // ---- scaleKubernetesCluster: validateKubernetesClusterScaleParameters, KubernetesClusterScaleWorker ---------

    @Test
    void aClusterInAlertIsNotScaled() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.setClusterState(cluster.id(), "Alert");
        String worker = cluster.vmIds().get(1);

        CloudStackException failure = scaleFailure(admin, cluster, List.of(worker));

        // PermissionDeniedException in the job, turned into INTERNAL_ERROR by ScaleKubernetesClusterCmd.execute.
        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).isEqualTo("Kubernetes cluster prod is in Alert state and can not be scaled");
        assertThat(simulator.findVm(worker)).isPresent();
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Alert");
    }

    @Test
    void autoscalingDoesNotStopAScaleByNodeIds() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 3);
        simulator.setAutoscaling(cluster.id(), true, 2L, 5L);
        String worker = cluster.vmIds().get(1);

        KubernetesCluster after = admin.scaleKubernetesCluster(cluster.id(), List.of(worker));

        // Only an autoscalingenabled parameter switches the worker to autoscaleCluster; nodeids go through.
        assertThat(after.size()).isEqualTo(2);
        assertThat(after.autoscalingEnabled()).isTrue();
        assertThat(simulator.findVm(worker)).isEmpty();
    }

    @Test
    void anExternalNodeInNodeIdsIsSkippedButStillLowersTheSize() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        SimulatedVm external = simulator.addExternalNode(cluster, "byo-node-1");

        KubernetesCluster after = admin.scaleKubernetesCluster(cluster.id(), List.of(external.id()));

        assertThat(simulator.findVm(external.id())).isPresent();
        assertThat(after.vmIds()).contains(external.id());
        assertThat(after.size()).as("clusterSize = nodeCount - nodeIds.size()").isEqualTo(2);
    }

    @Test
    void anEtcdNodeInNodeIdsFailsTheDrainAndLeavesTheClusterInAlert() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), "CloudManaged", version.id());
        simulator.addClusterVm(cluster, "prod-control-1", NodeRole.CONTROL);
        simulator.addClusterVm(cluster, "prod-node-1", NodeRole.WORKER);
        simulator.addClusterVm(cluster, "prod-node-2", NodeRole.WORKER);
        SimulatedVm etcd = simulator.addClusterVm(cluster, "prod-etcd-1", NodeRole.ETCD);

        CloudStackException failure = scaleFailure(admin, cluster, List.of(etcd.id()));

        assertThat(failure.errorText()).startsWith("Scaling failed for Kubernetes cluster prod, failed to remove Kubernetes node: prod-etcd-1");
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Alert");
        assertThat(simulator.findVm(etcd.id())).isPresent();
    }

    @Test
    void nodeIdsOutsideTheMapAreInvalid() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        SimulatedVm stranger = simulator.addVm("stranger", Owner.of(simulator.defaultAccount()));

        assertThat(scaleFailure(admin, cluster, List.of(stranger.id())).errorText()).isEqualTo("Invalid node ids");
    }

    @Test
    void removingEveryWorkerIsRefused() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);

        assertThat(scaleFailure(admin, cluster, List.of(cluster.vmIds().get(1))).errorText()).isEqualTo("Can not remove all nodes from a cluster");
    }

    @Test
    void anExternalManagedClusterIsNotScaled() {
        SimulatedCluster cluster = externalManaged("byo", Owner.of(simulator.defaultAccount()));
        SimulatedVm node = simulator.addClusterVm(cluster, "byo-node-1", NodeRole.WORKER);
        simulator.addClusterVm(cluster, "byo-node-2", NodeRole.WORKER);

        assertThat(scaleFailure(admin, cluster, List.of(node.id())).errorText())
                .isEqualTo("Scale kubernetes cluster is not supported for an externally managed cluster (byo)");
    }

    // ---- removeNodesFromKubernetesCluster (4.21+): KubernetesClusterRemoveWorker ------------------------------

    @Test
    void removingAnExternalNodeDropsItFromTheMapAndKeepsTheVm() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        SimulatedVm external = simulator.addExternalNode(cluster, "byo-node-1");

        AsyncJobResult job = admin.waitForJob("removeNodesFromKubernetesCluster",
                admin.startRemoveNodesFromKubernetesCluster(cluster.id(), List.of(external.id())));

        assertThat(job.succeeded()).isTrue();
        assertThat(simulator.cluster(cluster.id()).vmIds()).doesNotContain(external.id());
        assertThat(simulator.cluster(cluster.id()).size()).isEqualTo(1);
        assertThat(simulator.findVm(external.id())).isPresent();
    }

    /**
     * RemoveNodesFromKubernetesClusterCmd.getApiResourceType/getApiResourceId record the cluster, but
     * async_job_view's instance_uuid has no KubernetesCluster case: the job says KubernetesCluster and no id.
     */
    @Test
    void aRemoveNodesJobHasTheClusterTypeButNoInstanceId() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        SimulatedVm external = simulator.addExternalNode(cluster, "byo-node-1");

        AsyncJobResult job = admin.queryAsyncJob(admin.startRemoveNodesFromKubernetesCluster(cluster.id(), List.of(external.id())));

        assertThat(job.runs(CloudStackCommand.REMOVE_NODES_FROM_KUBERNETES_CLUSTER.commandClass())).isTrue();
        assertThat(job.jobInstanceType()).isEqualTo("KubernetesCluster");
        assertThat(job.jobInstanceId()).isNull();
    }

    /**
     * KubernetesCluster.State: RemovingNodes + OperationFailed → Running (not Alert, unlike a failed scale);
     * RemoveNodesFromKubernetesClusterCmd.execute turns every failure into 530; the map keeps the node.
     */
    @Test
    void aFailedRemovalLeavesTheClusterRunningAndTheNodeMapped() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        SimulatedVm external = simulator.addExternalNode(cluster, "byo-node-1");
        simulator.planJob("removeNodesFromKubernetesCluster", dev.cks.nodeops.cloudstack.simulator.JobOutcome.fails(530,
                "Failed to remove node(s) from Kubernetes cluster ID: 7"));

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> admin.waitForJob("removeNodesFromKubernetesCluster",
                admin.startRemoveNodesFromKubernetesCluster(cluster.id(), List.of(external.id()))));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Running");
        assertThat(simulator.cluster(cluster.id()).vmIds()).contains(external.id());
    }

    /** KubernetesClusterManagerImpl.validateNodes(remove=true) drops only ids without a VM; nothing left → 530 in the job. */
    @Test
    void removingOnlyExpungedNodesFailsTheJobWithNoValidNodes() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        SimulatedVm gone = simulator.addVm("gone", Owner.of(simulator.defaultAccount()));
        admin.waitForJob("destroyVirtualMachine", admin.startDestroyVirtualMachine(gone.id()));

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> admin.waitForJob("removeNodesFromKubernetesCluster",
                admin.startRemoveNodesFromKubernetesCluster(cluster.id(), List.of(gone.id()))));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).endsWith("due to: No valid nodes found to be removed from the Kubernetes cluster");
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Running");
    }

    // ---- removeVirtualMachinesFromKubernetesCluster: RemoveVirtualMachinesFromKubernetesClusterCmd --------------

    @Test
    void aCloudManagedMapIsNotEditedByHand() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> admin.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(cluster.vmIds().get(1))));

        assertThat(failure.kind()).isEqualTo(Kind.API_ERROR);
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).isEqualTo("VM cannot be removed from a CloudStack Managed Kubernetes cluster");
    }

    @Test
    void anExpungedVmStillInTheMapFailsTheWholeCall() {
        SimulatedCluster cluster = externalManaged("byo", Owner.of(simulator.defaultAccount()));
        SimulatedVm gone = simulator.addClusterVm(cluster, "byo-node-1", NodeRole.WORKER);
        SimulatedVm kept = simulator.addClusterVm(cluster, "byo-node-2", NodeRole.WORKER);
        admin.destroyVirtualMachine(gone.id());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> admin.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(gone.id(), kept.id())));

        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(simulator.cluster(cluster.id()).vmIds()).containsExactly(gone.id(), kept.id());
    }

    // ---- destroyVirtualMachine: DestroyVMCmd, UserVmManagerImpl, KubernetesServiceHelperImpl -------------------

    @Test
    void expungesOnlyWhenTheKeyMay() {
        SimulatedAccount tenant = user("tenant");
        SimulatedVm vm = simulator.addVm("tenant-vm", Owner.of(tenant));
        CloudStackClient tenantClient = clientFor(tenant);

        tenantClient.destroyVirtualMachine(vm.id());

        // listCapabilities' allowuserexpungerecovervm is false for a plain user: destroyed, kept until CloudStack expunges it.
        assertThat(simulator.calls("destroyVirtualMachine")).singleElement().satisfies(call -> assertThat(call.params()).doesNotContainKey("expunge"));
        assertThat(simulator.vm(vm.id()).state()).isEqualTo("Destroyed");

        simulator.allowUserExpunge(tenant, true);
        SimulatedVm second = simulator.addVm("tenant-vm-2", Owner.of(tenant));
        time.advance(CloudStackClient.CAPABILITIES_TTL);
        tenantClient.destroyVirtualMachine(second.id());

        assertThat(simulator.calls("destroyVirtualMachine").get(1).params()).containsEntry("expunge", "true");
        assertThat(simulator.findVm(second.id())).isEmpty();
    }

    @Test
    void aUserAskingToExpungeWithoutTheSettingFailsInTheJob() {
        SimulatedAccount tenant = user("tenant");
        SimulatedVm vm = simulator.addVm("tenant-vm", Owner.of(tenant));
        CloudStackClient tenantClient = clientFor(tenant);

        CloudStackClient.ApiCall askingToExpunge = new CloudStackClient.ApiCall(CloudStackCommand.DESTROY_VIRTUAL_MACHINE,
                java.util.Map.of("id", vm.id(), "expunge", "true"));
        String jobId = CloudStackResponses.jobId(tenantClient.execute(askingToExpunge), "destroyVirtualMachine");

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> tenantClient.waitForJob("destroyVirtualMachine", jobId));

        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).isEqualTo("Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set.");
        assertThat(simulator.vm(vm.id()).state()).isEqualTo("Running");
    }

    @Test
    void aNodeOfACloudManagedClusterIsNotDestroyedDirectly() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        String worker = cluster.vmIds().get(1);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> admin.destroyVirtualMachine(worker));

        assertThat(failure.errorText()).startsWith("Instance is a part of a Kubernetes cluster: prod.");
        assertThat(simulator.findVm(worker)).isPresent();
    }

    @Test
    void destroyingAnExpungedVmFailsInTheJob() {
        SimulatedVm vm = simulator.addVm("gone", Owner.of(simulator.defaultAccount()));
        simulator.destroyVm(vm.id(), true);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> admin.destroyVirtualMachine(vm.id()));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(431);
        assertThat(failure.errorText()).isEqualTo("Unable to find a virtual machine with specified vmId");
    }

    // ---- attachIso / detachIso: TemplateManagerImpl -----------------------------------------------------------

    @Test
    void detachingFromAVmWithoutAnIsoFailsTheJobWithCloudStacksText() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        String vm = cluster.vmIds().get(1);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> admin.detachIso(vm));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(431);
        assertThat(failure.errorText()).isEqualTo("The specified VM has no ISO attached to it.");
        assertThat(failure.isNoIsoAttached()).isTrue();
    }

    @Test
    void attachingOverAnAttachedIsoSwapsIt() {
        SimulatedVersion old = simulator.addSupportedVersion("1.33.1");
        SimulatedVersion next = simulator.addSupportedVersion("1.34.0");
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        String vm = cluster.vmIds().get(1);
        admin.attachIso(old.isoId(), vm);

        VirtualMachine after = admin.attachIso(next.isoId(), vm);

        assertThat(after.isoId()).isEqualTo(next.isoId());
        assertThat(simulator.vm(vm).isoId()).isEqualTo(next.isoId());
    }

    // ---- async jobs: AsyncJobJoinDaoImpl.newAsyncJobResponse, ListAsyncJobsCmd ---------------------------------

    @Test
    void aJobNamesItsCommandClassAndAVmDestroyItsVm() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));

        AsyncJobResult job = admin.queryAsyncJob(admin.startDestroyVirtualMachine(vm.id()));

        assertThat(job.cmd()).isEqualTo("org.apache.cloudstack.api.command.admin.vm.DestroyVMCmdByAdmin");
        assertThat(job.runs(CloudStackCommand.DESTROY_VIRTUAL_MACHINE.commandClass())).isTrue();
        assertThat(job.jobInstanceType()).isEqualTo("VirtualMachine");
        assertThat(job.jobInstanceId()).isEqualTo(vm.id());
        assertThat(job.jobResultType()).isEqualTo("object");
    }

    @Test
    void aWriteWhoseAnswerWasLostIsFoundAmongTheKeysJobs() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        String worker = cluster.vmIds().get(1);
        time.advance(Duration.ofHours(30));
        simulator.injectFault("scaleKubernetesCluster", Fault.answerLost());

        CloudStackException lost = catchThrowableOfType(CloudStackException.class,
                () -> admin.startScaleKubernetesCluster(cluster.id(), List.of(worker)));
        assertThat(lost.outcomeUnknown()).isTrue();

        List<AsyncJobResult> jobs = admin.listAsyncJobs(time.instant().minusSeconds(5));

        assertThat(jobs).filteredOn(job -> job.runs(CloudStackCommand.SCALE_KUBERNETES_CLUSTER.commandClass())).singleElement()
                .satisfies(job -> assertThat(admin.waitForJob("scaleKubernetesCluster", job.jobId()).succeeded()).isTrue());
        assertThat(simulator.findVm(worker)).isEmpty();
        assertThat(simulator.calls("listAsyncJobs")).singleElement()
                .satisfies(call -> assertThat(call.param("startdate")).isEqualTo("2026-01-01"));
    }

    /**
     * ApiServer.queueCommand records the command's getApiResourceType/getApiResourceId on the job;
     * AsyncJobJoinDaoImpl.newAsyncJobResponse shows the type when type and id are set and the id as
     * async_job_view resolves it (VirtualMachine yes, KubernetesCluster no); AsyncJobManagerImpl.completeAsyncJob
     * leaves both as they were. ScaleKubernetesClusterCmd names nothing (BaseCmd: None, null);
     * DestroyVMCmd, AttachIsoCmd and DetachIsoCmd name the VM.
     */
    @Test
    void eachWriteJobNamesWhatItsCommandNamesWhileRunningAndAfter() {
        SimulatedCluster scaled = simulator.addCluster("scaled", 1, 2);
        SimulatedCluster removing = simulator.addCluster("removing", 1, 1);
        SimulatedVm external = simulator.addExternalNode(removing, "byo-node-1");
        SimulatedVm destroyed = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        SimulatedVm attached = simulator.addVm("attach-to", Owner.of(simulator.defaultAccount()));
        SimulatedVm detached = simulator.addVm("detach-from", Owner.of(simulator.defaultAccount()));
        String isoId = simulator.addSupportedVersion("1.34.0").isoId();
        admin.attachIso(isoId, detached.id());
        for (String command : List.of("scaleKubernetesCluster", "removeNodesFromKubernetesCluster", "destroyVirtualMachine", "attachIso", "detachIso")) {
            simulator.planJob(command, dev.cks.nodeops.cloudstack.simulator.JobOutcome.succeedsAfterPolls(2));
        }

        assertInstanceRunningAndFinished(admin.startScaleKubernetesCluster(scaled.id(), List.of(scaled.vmIds().get(1))), null, null);
        assertInstanceRunningAndFinished(admin.startRemoveNodesFromKubernetesCluster(removing.id(), List.of(external.id())),
                "KubernetesCluster", null);
        assertInstanceRunningAndFinished(admin.startDestroyVirtualMachine(destroyed.id()), "VirtualMachine", destroyed.id());
        assertInstanceRunningAndFinished(admin.startAttachIso(isoId, attached.id()), "VirtualMachine", attached.id());
        assertInstanceRunningAndFinished(admin.startDetachIso(detached.id()), "VirtualMachine", detached.id());
    }

    private void assertInstanceRunningAndFinished(String jobId, String type, String id) {
        AsyncJobResult running = admin.queryAsyncJob(jobId);
        AsyncJobResult finished = admin.queryAsyncJob(jobId);
        assertThat(running.isPending()).isTrue();
        assertThat(finished.succeeded()).isTrue();
        for (AsyncJobResult job : List.of(running, finished)) {
            assertThat(job.jobInstanceType()).as(job.cmd()).isEqualTo(type);
            assertThat(job.jobInstanceId()).as(job.cmd()).isEqualTo(id);
        }
    }

    /**
     * QueryManagerImpl.searchForAsyncJobsInternal with AccountManagerImpl.buildACLSearchParameters: the
     * caller's account goes into permittedAccounts, so another user's (another key's) job of the same
     * account is listed, another account's is not, and a root admin without listall sees only its own account.
     */
    @Test
    void listsEveryJobOfTheCallersAccountWhicheverKeyStartedIt() {
        SimulatedAccount tenant = user("tenant");
        SimulatedAccount ui = simulator.addUser(tenant, "ui-user");
        SimulatedAccount other = user("other");
        SimulatedCluster mine = simulator.addCluster("mine", Owner.of(tenant), 1, 2);
        SimulatedCluster theirs = simulator.addCluster("theirs", Owner.of(other), 1, 2);
        String fromUi = clientFor(ui).startScaleKubernetesCluster(mine.id(), List.of(mine.vmIds().get(1)));
        clientFor(other).startScaleKubernetesCluster(theirs.id(), List.of(theirs.vmIds().get(1)));

        assertThat(clientFor(tenant).listAsyncJobs(time.instant())).extracting(AsyncJobResult::jobId).containsExactly(fromUi);
        assertThat(admin.listAsyncJobs(time.instant())).isEmpty();
    }

    /** DynamicRoleBasedAPIAccessChecker.checkAccess looks up the role of the user's account: every key of the account shares it. */
    @Test
    void aSecondUserOfAnAccountHasTheAccountsRole() {
        SimulatedAccount tenant = user("tenant");
        simulator.restrictApis(tenant, Set.of("listVirtualMachines"));
        SimulatedAccount second = simulator.addUser(tenant, "second");

        CloudStackException refused = catchThrowableOfType(CloudStackException.class,
                () -> clientFor(second).listKubernetesClusters(OwnerScope.CALLER));

        assertThat(refused.errorCode()).isEqualTo(432);
    }

    @Test
    void aJobRunsWhetherOrNotAnybodyPollsIt() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        simulator.planJob("destroyVirtualMachine", dev.cks.nodeops.cloudstack.simulator.JobOutcome.runsAtOnce());
        simulator.injectFault("destroyVirtualMachine", Fault.answerLost());

        catchThrowableOfType(CloudStackException.class, () -> admin.startDestroyVirtualMachine(vm.id()));

        assertThat(admin.findVirtualMachine(OwnerScope.CALLER, vm.id())).as("expunged by the job nobody polled").isEmpty();
        assertThat(simulator.calls("queryAsyncJobResult")).isEmpty();
    }

    /**
     * AsyncJobManagerImpl.completeAsyncJob sets a finished job's removed and listAsyncJobs' search
     * (GenericDaoBase.searchAndCount on async_job_view) keeps only removed IS NULL: a job is listed while it
     * runs, never after, succeeded or failed; queryAsyncJobResult knows it until getGCTask expunges it
     * job.expire.minutes (1440) after it ended.
     */
    @Test
    void aFinishedJobIsNoLongerListedAndForgottenADayAfterItEnded() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        String jobId = admin.startDestroyVirtualMachine(vm.id());
        Instant asked = time.instant();
        assertThat(admin.listAsyncJobs(asked)).extracting(AsyncJobResult::jobId).containsExactly(jobId);
        assertThat(admin.queryAsyncJob(jobId).succeeded()).isTrue();

        assertThat(admin.listAsyncJobs(asked)).isEmpty();
        time.advance(Duration.ofMinutes(1439));
        assertThat(admin.queryAsyncJob(jobId).succeeded()).isTrue();
        time.advance(Duration.ofMinutes(1));

        assertThat(catchThrowableOfType(CloudStackException.class, () -> admin.queryAsyncJob(jobId)).isUnknownId()).isTrue();
    }

    // ---- The management server's clock: ApiServer.verifyRequest, AsyncJobManagerImpl ------------------------------

    /**
     * A job's created comes from the management server's clock (GenericDaoBase.generateValue gives the
     * Created column new Date() when AsyncJobManagerImpl.submitAsyncJob persists it), so a server 3 minutes
     * behind dates its jobs 3 minutes before our request.
     */
    @Test
    void aJobIsDatedByTheServersClock() {
        simulator.shiftClock(Duration.ofMinutes(-3));
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));

        AsyncJobResult job = admin.queryAsyncJob(admin.startDestroyVirtualMachine(vm.id()));

        assertThat(CloudStackTimestamps.parse(job.created())).contains(time.instant().minus(Duration.ofMinutes(3)));
    }

    /**
     * ApiServer.verifyRequest compares expires with the server's own clock (expiresTS.before(now), no
     * upper bound): a server 11 minutes ahead refuses a request signed for 10 by our clock, with the 401 of a
     * bad signature; one 9 minutes ahead takes it. (The client then measures the clock and signs again.)
     */
    @Test
    void aServerAheadOfTheSignatureLifetimeRefusesTheRequestAsUnverified() {
        simulator.shiftClock(Duration.ofMinutes(9));
        simulator.clearCalls();
        assertThat(admin.listKubernetesSupportedVersions()).isEmpty();
        assertThat(simulator.calls("listKubernetesSupportedVersions")).extracting(RecordedCall::authenticated).containsExactly(true);

        simulator.shiftClock(Duration.ofMinutes(11));
        simulator.clearCalls();
        assertThat(admin.listKubernetesSupportedVersions()).isEmpty();
        assertThat(simulator.calls("listKubernetesSupportedVersions")).extracting(RecordedCall::authenticated).containsExactly(false, true);
    }

    @Test
    void aJobIdThatNamesNoJobIsRefused() {
        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> admin.queryAsyncJob("0000dead-0000-4000-8000-00000000beef"));

        assertThat(failure.isUnknownId()).isTrue();
    }

    // ---- listCapabilities: ManagementServerImpl.listCapabilities ------------------------------------------------

    @Test
    void anAdminMayAlwaysExpungeAUserOnlyWithTheSetting() {
        SimulatedAccount tenant = user("tenant");

        assertThat(admin.capabilities().mayExpunge()).isTrue();
        assertThat(admin.capabilities().cloudStackVersion()).isEqualTo("4.21.0.0");
        assertThat(clientFor(tenant).capabilities().mayExpunge()).isFalse();
    }

    // ---- errors: ApiServer, DynamicRoleBasedAPIAccessChecker, CSExceptionErrorCode -----------------------------

    @Test
    void anotherAccountsVmIsDeniedWithThePermissionDeniedCode() {
        SimulatedAccount tenant = user("tenant");
        SimulatedVm adminsVm = simulator.addVm("admins-vm", Owner.of(simulator.defaultAccount()));

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> clientFor(tenant).startDestroyVirtualMachine(adminsVm.id()));

        assertThat(failure.errorCode()).isEqualTo(531);
        assertThat(failure.csErrorCode()).isEqualTo(4365);
        assertThat(failure.isPermissionDenied()).isTrue();
    }
}
