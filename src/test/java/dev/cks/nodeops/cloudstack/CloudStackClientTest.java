package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.cloudstack.simulator.SimulatedAccount;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.cloudstack.simulator.SimulatedProject;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVm;
import dev.cks.nodeops.testing.TestSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CloudStackClientTest {

    private final ManualTime time = new ManualTime();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private CloudStackSimulator simulator;
    private CloudStackClient client;

    @BeforeEach
    void start() {
        simulator = CloudStackSimulator.start(0, time);
        client = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS);
    }

    @AfterEach
    void stop() {
        simulator.close();
    }

    private CloudStackClient clientFor(CloudStackCredentials credentials, CloudStackClientSettings settings) {
        // Jitter fixed at 1.0 makes every backoff its full step, so sleeps are predictable.
        return new CloudStackClient(credentials, settings, registry, time, time, () -> 1.0);
    }

    private CloudStackClientSettings fastTimeouts() {
        return CloudStackClientSettings.DEFAULTS.withTimeouts(Duration.ofSeconds(2), Duration.ofMillis(300), Duration.ofSeconds(5));
    }

    // ---- reads --------------------------------------------------------------------------

    @Test
    void findsOneClusterByIdWithItsVmMap() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.addCluster("other", 1, 1);

        KubernetesCluster found = client.findKubernetesCluster(cluster.id()).orElseThrow();

        assertThat(found.name()).isEqualTo("prod");
        assertThat(found.state()).isEqualTo("Running");
        assertThat(found.clusterType()).isEqualTo(KubernetesCluster.CLOUD_MANAGED);
        assertThat(found.size()).isEqualTo(2);
        assertThat(found.controlNodeCount()).isEqualTo(1);
        assertThat(found.vmIds()).containsExactlyElementsOf(cluster.vmIds());
        assertThat(found.virtualMachines()).extracting(VirtualMachine::name)
                .anyMatch(name -> name.startsWith("prod-control-"))
                .filteredOn(name -> name.startsWith("prod-node-")).hasSize(2);
        assertThat(simulator.calls("listKubernetesClusters")).singleElement()
                .satisfies(call -> assertThat(call.params()).containsEntry("id", cluster.id()).containsEntry("listall", "true"));
    }

    @Test
    void findsNothingForAnUnknownClusterId() {
        assertThat(client.findKubernetesCluster("no-such-id")).isEmpty();
    }

    @Test
    void listsTheClustersOfAnAccountAndOfAProject() {
        SimulatedAccount tenant = simulator.addAccount("tenant", "d-tenant", "tenant-key-1234", "tenant-secret-5678", false);
        SimulatedProject project = simulator.addProject("team");
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        simulator.addCluster("tenant-a", Owner.of(tenant), "CloudManaged", version.id());
        simulator.addCluster("tenant-b", Owner.of(tenant), "ExternalManaged", version.id());
        simulator.addCluster("team-a", Owner.project(project), "CloudManaged", version.id());
        simulator.addCluster("admins", 1, 0);

        assertThat(client.listKubernetesClusters(OwnerScope.account("tenant", "d-tenant")))
                .extracting(KubernetesCluster::name).containsExactlyInAnyOrder("tenant-a", "tenant-b");
        assertThat(client.listKubernetesClusters(OwnerScope.project(project.id())))
                .extracting(KubernetesCluster::name).containsExactly("team-a");
        CloudStackClient tenantClient = clientFor(simulator.credentials(tenant), CloudStackClientSettings.DEFAULTS);
        assertThat(tenantClient.listKubernetesClusters(OwnerScope.CALLER))
                .extracting(KubernetesCluster::name).containsExactlyInAnyOrder("tenant-a", "tenant-b");
    }

    @Test
    void usesTheProjectOfTheCredentialsWhenNoOwnerIsGiven() {
        SimulatedProject project = simulator.addProject("team");
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster inProject = simulator.addCluster("team-a", Owner.project(project), "CloudManaged", version.id());
        simulator.addCluster("outside", 1, 0);
        CloudStackClient projectClient = clientFor(simulator.credentials().withProjectId(project.id()), CloudStackClientSettings.DEFAULTS);

        assertThat(projectClient.findKubernetesCluster(inProject.id())).isPresent();
        assertThat(projectClient.listKubernetesClusters(OwnerScope.CALLER)).extracting(KubernetesCluster::name).containsExactly("team-a");
    }

    @Test
    void listsVirtualMachinesOfAnOwnerByKeyword() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 3);
        simulator.addVm("unrelated", Owner.of(simulator.defaultAccount()));
        SimulatedVm stopped = simulator.clusterVms(cluster.id()).get(1);
        simulator.setVmState(stopped.id(), "Stopped");

        List<VirtualMachine> vms = client.listVirtualMachines(VmQuery.allOf(OwnerScope.account("admin", CloudStackSimulator.ROOT_DOMAIN_ID)).withKeyword("prod-"));

        assertThat(vms).hasSize(4).allSatisfy(vm -> assertThat(vm.name()).startsWith("prod-"));
        assertThat(vms).filteredOn(vm -> vm.id().equals(stopped.id())).singleElement()
                .satisfies(vm -> assertThat(vm.state()).isEqualTo("Stopped"));
        assertThat(vms.get(0).createdAt()).contains(time.instant());
        assertThat(vms.get(0).account()).isEqualTo("admin");
        RecordedCall call = simulator.calls("listVirtualMachines").get(0);
        assertThat(call.httpMethod()).isEqualTo("GET");
        assertThat(call.params()).containsEntry("keyword", "prod-").containsEntry("account", "admin")
                .containsEntry("domainid", CloudStackSimulator.ROOT_DOMAIN_ID).containsEntry("listall", "true")
                .containsEntry("page", "1").containsEntry("pagesize", "500");
    }

    @Test
    void readsAnEmptyListAsNoVirtualMachines() {
        assertThat(client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER).withKeyword("nothing"))).isEmpty();
    }

    @Test
    void listsEveryPageOf1200VirtualMachinesInThreeCalls() {
        for (int i = 0; i < 1200; i++) {
            simulator.addVm("vm-" + i, Owner.of(simulator.defaultAccount()));
        }

        List<VirtualMachine> vms = client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER));

        assertThat(vms).hasSize(1200).extracting(VirtualMachine::id).doesNotHaveDuplicates();
        assertThat(simulator.calls("listVirtualMachines")).extracting(call -> call.param("page") + "/" + call.param("pagesize"))
                .containsExactly("1/500", "2/500", "3/500");
    }

    @Test
    void pagesWithTheConfiguredPageSize() {
        for (int i = 0; i < 25; i++) {
            simulator.addVm("vm-" + i, Owner.of(simulator.defaultAccount()));
        }
        CloudStackClient smallPages = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS.withPageSize(10));

        assertThat(smallPages.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER))).hasSize(25);
        assertThat(simulator.calls("listVirtualMachines")).hasSize(3);
    }

    @Test
    void listsSupportedVersionsWithTheirIsos() {
        SimulatedVersion version = simulator.addSupportedVersion("1.34.2");

        assertThat(client.listKubernetesSupportedVersions()).singleElement().satisfies(v -> {
            assertThat(v.semanticVersion()).isEqualTo("1.34.2");
            assertThat(v.isoId()).isEqualTo(version.isoId());
            assertThat(v.isUsable()).isTrue();
        });
    }

    // ---- writes and async jobs ----------------------------------------------------------

    @Test
    void scalesDownByRemovingExactlyTheGivenNodesInOneCall() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 3);
        List<SimulatedVm> workers = simulator.clusterVms(cluster.id()).stream().filter(vm -> vm.role() == NodeRole.WORKER).toList();
        List<String> removed = List.of(workers.get(0).id(), workers.get(2).id());

        KubernetesCluster after = client.scaleKubernetesCluster(cluster.id(), removed);

        List<RecordedCall> scaleCalls = simulator.calls("scaleKubernetesCluster");
        assertThat(scaleCalls).singleElement().satisfies(call -> {
            assertThat(call.httpMethod()).isEqualTo("POST");
            assertThat(call.param("id")).isEqualTo(cluster.id());
            assertThat(call.param("nodeids").split(",")).containsExactlyInAnyOrderElementsOf(removed);
        });
        assertThat(after.size()).isEqualTo(1);
        assertThat(after.vmIds()).doesNotContainAnyElementsOf(removed).hasSize(2);
        assertThat(simulator.findVm(removed.get(0))).isEmpty();
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Running");
    }

    @Test
    void pollsAJobWithGrowingIntervalsUntilItFinishes() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.planJob("scaleKubernetesCluster", JobOutcome.succeedsAfterPolls(4));
        CloudStackClient polling = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS
                .withAsyncJobWait(Duration.ofMinutes(5), Duration.ofSeconds(1), Duration.ofSeconds(3)));

        polling.scaleKubernetesCluster(cluster.id(), List.of(simulator.clusterVms(cluster.id()).get(1).id()));

        assertThat(simulator.calls("queryAsyncJobResult")).hasSize(4);
        assertThat(time.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(3));
    }

    @Test
    void startsAScaleWithoutWaitingAndPollsItOneQueryAtATime() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.planJob("scaleKubernetesCluster", JobOutcome.succeedsAfterPolls(2));
        String worker = simulator.clusterVms(cluster.id()).get(1).id();

        String jobId = client.startScaleKubernetesCluster(cluster.id(), List.of(worker));

        assertThat(simulator.calls("queryAsyncJobResult")).as("starting never polls").isEmpty();
        assertThat(time.sleeps()).as("nor waits").isEmpty();
        assertThat(client.queryAsyncJob(jobId).isPending()).isTrue();
        AsyncJobResult done = client.queryAsyncJob(jobId);
        assertThat(done.succeeded()).isTrue();
        assertThat(done.jobId()).isEqualTo(jobId);
        assertThat(simulator.calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids")).isEqualTo(worker));
        assertThat(simulator.findVm(worker)).isEmpty();
    }

    @Test
    void startsADestroyWithoutWaiting() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("byo", Owner.of(simulator.defaultAccount()), "ExternalManaged", version.id());
        String worker = simulator.addClusterVm(cluster, "byo-node-1", NodeRole.WORKER).id();

        String jobId = client.startDestroyVirtualMachine(worker);

        assertThat(simulator.calls("queryAsyncJobResult")).isEmpty();
        assertThat(simulator.calls("destroyVirtualMachine")).singleElement()
                .satisfies(call -> assertThat(call.params()).containsEntry("id", worker).containsEntry("expunge", "true"));
        assertThat(client.queryAsyncJob(jobId).succeeded()).isTrue();
        assertThat(simulator.findVm(worker)).isEmpty();
    }

    @Test
    void aFailedJobIsReportedByTheQueryNotThrown() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.planJob("scaleKubernetesCluster", JobOutcome.fails(530, "node drain failed"));

        String jobId = client.startScaleKubernetesCluster(cluster.id(), List.of(simulator.clusterVms(cluster.id()).get(1).id()));
        AsyncJobResult failed = client.queryAsyncJob(jobId);

        assertThat(failed.failed()).isTrue();
        assertThat(CloudStackResponses.jobError(failed).errorText()).isEqualTo("node drain failed");
    }

    @Test
    void raisesTheErrorOfAFailedJob() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.planJob("scaleKubernetesCluster", JobOutcome.fails(530, "Failed to scale Kubernetes cluster prod: node drain failed"));
        String worker = simulator.clusterVms(cluster.id()).get(1).id();

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client.scaleKubernetesCluster(cluster.id(), List.of(worker)));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.command()).isEqualTo("scaleKubernetesCluster");
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).contains("node drain failed");
        assertThat(failure.jobId()).isNotBlank();
        assertThat(failure.getMessage()).contains("scaleKubernetesCluster", "530", "node drain failed");
        assertThat(simulator.calls("scaleKubernetesCluster")).hasSize(1);
        assertThat(simulator.findVm(worker)).isPresent();
        assertThat(simulator.cluster(cluster.id()).state()).isEqualTo("Alert");
    }

    @Test
    void givesUpOnAJobThatNeverFinishesAtTheTimeout() {
        SimulatedVm vm = simulator.addVm("doomed", Owner.of(simulator.defaultAccount()));
        simulator.planJob("destroyVirtualMachine", JobOutcome.neverFinishes());
        CloudStackClient patient = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS
                .withAsyncJobWait(Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofSeconds(20)));

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> patient.destroyVirtualMachine(vm.id()));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_TIMEOUT);
        assertThat(failure.jobId()).isNotBlank();
        assertThat(time.totalSlept()).isEqualTo(Duration.ofSeconds(60));
        assertThat(simulator.calls("destroyVirtualMachine")).hasSize(1);
    }

    @Test
    void destroysAndExpungesAVirtualMachine() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));

        client.destroyVirtualMachine(vm.id());

        assertThat(simulator.findVm(vm.id())).isEmpty();
        assertThat(simulator.calls("destroyVirtualMachine")).singleElement()
                .satisfies(call -> assertThat(call.params()).containsEntry("id", vm.id()).containsEntry("expunge", "true"));
    }

    @Test
    void removesVirtualMachinesFromTheMapOfAnExternalManagedCluster() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("byo", Owner.of(simulator.defaultAccount()), "ExternalManaged", version.id());
        SimulatedVm node = simulator.addClusterVm(cluster, "byo-node-1", NodeRole.WORKER);
        SimulatedVm kept = simulator.addClusterVm(cluster, "byo-node-2", NodeRole.WORKER);

        client.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(node.id()));

        assertThat(simulator.cluster(cluster.id()).vmIds()).containsExactly(kept.id());
        assertThat(simulator.findVm(node.id())).as("the VM itself stays").isPresent();
    }

    @Test
    void takesAVmNoLongerInTheMapAsAlreadyDropped() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("byo", Owner.of(simulator.defaultAccount()), "ExternalManaged", version.id());
        SimulatedVm node = simulator.addClusterVm(cluster, "byo-node-1", NodeRole.WORKER);
        client.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(node.id()));

        // The answer of the first call was lost, so the same call comes again: not an error.
        client.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(node.id()));

        assertThat(simulator.cluster(cluster.id()).vmIds()).isEmpty();
        assertThat(simulator.calls("removeVirtualMachinesFromKubernetesCluster")).hasSize(2);
    }

    @Test
    void refusesAnIdThatNamesNoVm() {
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("byo", Owner.of(simulator.defaultAccount()), "ExternalManaged", version.id());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of("stray")));

        assertThat(failure.errorCode()).isEqualTo(431);
        assertThat(failure.isUnknownId()).isTrue();
    }

    @Test
    void attachesAndDetachesTheBinariesIsoAsJobsTheCallerPolls() {
        SimulatedVersion version = simulator.addSupportedVersion("1.34.0");
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        String nodeId = cluster.vmIds().get(1);

        String attachJob = client.startAttachIso(version.isoId(), nodeId);
        AsyncJobResult attached = pollUntilDone(attachJob);
        assertThat(attached.succeeded()).isTrue();
        assertThat(CloudStackResponses.jobEntity(attached, "virtualmachine", VirtualMachine.class).orElseThrow().isoId()).isEqualTo(version.isoId());
        assertThat(simulator.vm(nodeId).isoId()).isEqualTo(version.isoId());

        AsyncJobResult detached = pollUntilDone(client.startDetachIso(nodeId));
        assertThat(detached.succeeded()).isTrue();
        assertThat(simulator.vm(nodeId).isoId()).isNull();
    }

    private AsyncJobResult pollUntilDone(String jobId) {
        for (int poll = 0; poll < 10; poll++) {
            AsyncJobResult job = client.queryAsyncJob(jobId);
            if (!job.isPending()) {
                return job;
            }
        }
        throw new AssertionError("job " + jobId + " still pending after 10 polls");
    }

    @Test
    void carriesTheServerErrorOfARefusedWrite() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        String unknown = "0000dead-0000-4000-8000-00000000beef";

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client.scaleKubernetesCluster(cluster.id(), List.of(unknown)));

        assertThat(failure.kind()).isEqualTo(Kind.API_ERROR);
        assertThat(failure.httpStatus()).isEqualTo(431);
        assertThat(failure.errorCode()).isEqualTo(431);
        assertThat(failure.isUnknownId()).isTrue();
        assertThat(failure.errorText()).contains("Invalid parameter nodeids value=" + unknown);
        assertThat(failure.outcomeUnknown()).as("an error answer means the server did not act").isFalse();
    }

    @Test
    void aScaleCloudStackRefusesFailsAsAJobNotAsAnAnswer() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        String control = cluster.vmIds().get(0);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client.scaleKubernetesCluster(cluster.id(), List.of(control)));

        assertThat(failure.kind()).isEqualTo(Kind.JOB_FAILED);
        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(failure.errorText()).isEqualTo("Can not remove all control nodes from a cluster");
        assertThat(simulator.findVm(control)).isPresent();
        assertThat(simulator.cluster(cluster.id()).state()).as("a refusal changes nothing").isEqualTo("Running");
    }

    @Test
    void waitsForAJobThatTakesTimeOnTheServerClock() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        simulator.planJob("destroyVirtualMachine", new JobOutcome.SucceedsAfter(Duration.ofSeconds(20)));

        client.destroyVirtualMachine(vm.id());

        assertThat(simulator.findVm(vm.id())).isEmpty();
        assertThat(time.totalSlept()).isGreaterThanOrEqualTo(Duration.ofSeconds(20));
        assertThat(registry.get(CloudStackApiMetrics.JOBS).tag("command", "destroyVirtualMachine").tag("outcome", "success")
                .timer().count()).isEqualTo(1);
    }

    @Test
    void signsUnusualCharactersAlikeInGetQueriesAndPostForms() {
        String text = "my cluster*~ é+%&=";
        simulator.addVm("my cluster*~ é+%&=-1", Owner.of(simulator.defaultAccount()));

        assertThat(client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER).withKeyword(text))).hasSize(1);
        SimulatedVersion version = simulator.addSupportedVersion("1.33.1");
        SimulatedCluster cluster = simulator.addCluster("byo", Owner.of(simulator.defaultAccount()), "ExternalManaged", version.id());
        assertThatThrownBy(() -> client.removeVirtualMachinesFromKubernetesCluster(cluster.id(), List.of(text)))
                .isInstanceOfSatisfying(CloudStackException.class, failure -> assertThat(failure.isUnknownId()).isTrue());

        assertThat(simulator.calls()).allSatisfy(call -> assertThat(call.authenticated()).isTrue());
        assertThat(simulator.calls("listVirtualMachines").get(0).param("keyword")).isEqualTo(text);
        assertThat(simulator.calls("removeVirtualMachinesFromKubernetesCluster").get(0).param("virtualmachineids")).isEqualTo(text);
    }

    @Test
    void countsFailedAndTimedOutJobs() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        simulator.planJob("destroyVirtualMachine", JobOutcome.fails(530, "no"), JobOutcome.neverFinishes());
        CloudStackClient shortWait = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS
                .withAsyncJobWait(Duration.ofSeconds(10), Duration.ofSeconds(5), Duration.ofSeconds(5)));

        assertThatThrownBy(() -> shortWait.destroyVirtualMachine(vm.id())).isInstanceOf(CloudStackException.class);
        assertThatThrownBy(() -> shortWait.destroyVirtualMachine(vm.id())).isInstanceOf(CloudStackException.class);

        assertThat(registry.get(CloudStackApiMetrics.JOBS).tag("outcome", "job_failed").timer().count()).isEqualTo(1);
        assertThat(registry.get(CloudStackApiMetrics.JOBS).tag("outcome", "job_timeout").timer().count()).isEqualTo(1);
        assertThat(registry.get(CloudStackApiMetrics.ERRORS).tag("command", "destroyVirtualMachine").tag("errorcode", "530")
                .counter().count()).isEqualTo(1);
    }

    // ---- retries --------------------------------------------------------------------------

    @Test
    void retriesReadsOnServerErrorsThrottlingAndDroppedConnections() {
        simulator.addVm("vm", Owner.of(simulator.defaultAccount()));
        simulator.injectFault("listVirtualMachines", Fault.serverError(), Fault.throttled(), Fault.droppedConnection());
        CloudStackClient retrying = clientFor(simulator.credentials(), fastTimeouts());

        assertThat(retrying.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER))).hasSize(1);

        assertThat(simulator.calls("listVirtualMachines")).hasSize(4);
        assertThat(time.sleeps()).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2));
        assertThat(registry.get(CloudStackApiMetrics.RETRIES).tag("command", "listVirtualMachines").counter().count()).isEqualTo(3);
    }

    @Test
    void retriesAReadWhoseAnswerIsTooSlow() {
        simulator.injectFault("listKubernetesSupportedVersions", Fault.slow(Duration.ofMillis(1500)));
        simulator.addSupportedVersion("1.33.1");
        CloudStackClient impatient = clientFor(simulator.credentials(), fastTimeouts());

        assertThat(impatient.listKubernetesSupportedVersions()).hasSize(1);
        assertThat(simulator.calls("listKubernetesSupportedVersions")).hasSize(2);
    }

    @Test
    void retriesAProxyErrorPage() {
        simulator.injectFault("listKubernetesSupportedVersions", Fault.badGateway());

        assertThat(client.listKubernetesSupportedVersions()).isEmpty();
        assertThat(simulator.calls("listKubernetesSupportedVersions")).hasSize(2);
    }

    @Test
    void stopsRetryingAReadAfterTheLastAttempt() {
        simulator.injectFault("listVirtualMachines", Fault.serverError(), Fault.serverError(), Fault.serverError(),
                Fault.serverError(), Fault.serverError());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER)));

        assertThat(failure.errorCode()).isEqualTo(530);
        assertThat(simulator.calls("listVirtualMachines")).hasSize(RetryPolicy.DEFAULT.maxAttempts());
        assertThat(registry.get(CloudStackApiMetrics.REQUESTS).tag("command", "listVirtualMachines")
                .tag("outcome", "api_error").timer().count()).isEqualTo(1);
    }

    @Test
    void neverRetriesAWriteThatFailedWithAServerError() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        simulator.injectFault("scaleKubernetesCluster", Fault.serverError());

        assertThatThrownBy(() -> client.scaleKubernetesCluster(cluster.id(), List.of(cluster.vmIds().get(1))))
                .isInstanceOf(CloudStackException.class);

        assertThat(simulator.calls("scaleKubernetesCluster")).hasSize(1);
        assertThat(time.sleeps()).isEmpty();
    }

    @Test
    void neverRetriesAWriteWhoseConnectionDropped() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        simulator.injectFault("destroyVirtualMachine", Fault.droppedConnection());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> client.destroyVirtualMachine(vm.id()));

        assertThat(failure.kind()).isEqualTo(Kind.TRANSPORT_ERROR);
        assertThat(failure.requestNeverSent()).isFalse();
        assertThat(simulator.calls("destroyVirtualMachine")).hasSize(1);
    }

    @Test
    void neverRetriesAWriteThatTimedOut() {
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        simulator.injectFault("destroyVirtualMachine", Fault.slow(Duration.ofMillis(1500)));
        CloudStackClient impatient = clientFor(simulator.credentials(), fastTimeouts());

        assertThatThrownBy(() -> impatient.destroyVirtualMachine(vm.id())).isInstanceOf(CloudStackException.class);
        assertThat(simulator.calls("destroyVirtualMachine")).hasSize(1);
    }

    @Test
    void retriesAWriteThatCouldNotConnect() {
        String closedPort;
        try (CloudStackSimulator gone = CloudStackSimulator.start()) {
            closedPort = gone.apiUrl();
        }
        CloudStackClient unreachable = clientFor(CloudStackCredentials.of(closedPort, "k-1234", "s-5678"), fastTimeouts());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> unreachable.startDetachIso("vm"));

        assertThat(failure.kind()).isEqualTo(Kind.TRANSPORT_ERROR);
        assertThat(failure.requestNeverSent()).isTrue();
        assertThat(failure.outcomeUnknown()).isFalse();
        assertThat(registry.get(CloudStackApiMetrics.RETRIES).tag("command", "detachIso").counter().count())
                .isEqualTo(CloudStackClientSettings.DEFAULTS.unsentWriteRetry().maxAttempts() - 1);
    }

    // ---- authentication -------------------------------------------------------------------

    @Test
    void rejectsAWrongSecretKeyWithTheUnauthorizedError() {
        CloudStackCredentials wrong = CloudStackCredentials.of(simulator.apiUrl(), simulator.defaultAccount().apiKey(), "not-the-secret");

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> clientFor(wrong, CloudStackClientSettings.DEFAULTS).listKubernetesSupportedVersions());

        assertThat(failure.kind()).isEqualTo(Kind.API_ERROR);
        assertThat(failure.httpStatus()).isEqualTo(401);
        assertThat(failure.errorCode()).isEqualTo(401);
        assertThat(failure.isAuthenticationFailure()).isTrue();
        assertThat(failure.getMessage()).contains("Check the API URL, API key and secret key");
        assertThat(simulator.calls("listKubernetesSupportedVersions")).as("refused, the clock measured, not sent again: the keys, not the clock")
                .hasSize(1);
        assertThat(registry.get(CloudStackApiMetrics.ERRORS).tag("errorcode", "401").counter().count()).isEqualTo(1);
    }

    /**
     * Shape: any. Actor: CloudStack's clock, 11 minutes ahead of the operator's, then 3 minutes behind. CloudStack
     * sends no Date header, so the client measures its clock by which expiry it still takes: the first request
     * is refused as if the keys were wrong, the clock is measured, and the request signed again goes through.
     */
    @Test
    void aRequestRefusedForAClockFarAheadIsSignedAgainForCloudStacksMeasuredClock() {
        for (Duration skew : java.util.List.of(Duration.ofMinutes(11), Duration.ofMinutes(-3))) {
            simulator.shiftClock(skew);
            simulator.clearCalls();
            CloudStackClient fresh = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS);

            fresh.listKubernetesSupportedVersions();
            if (skew.isNegative()) {
                // Behind: nothing is refused, and a write measures it first.
                fresh.measureClockIfStale();
            }

            assertThat(fresh.cloudStackClock().offset()).as("measured %s", skew).isBetween(skew.minusSeconds(2), skew.plusSeconds(2));
            assertThat(simulator.calls("listKubernetesSupportedVersions")).extracting(RecordedCall::authenticated)
                    .containsExactlyElementsOf(skew.isNegative() ? java.util.List.of(true) : java.util.List.of(false, true));
            assertThat(simulator.calls("listCapabilities").size()).as("a bisection over a day either way").isBetween(10, 20);
            assertThat(fresh.cloudStackClock().skew()).hasValueSatisfying(text -> assertThat(text).contains(skew.isNegative() ? "behind" : "ahead"));
        }
    }

    /**
     * The configured lifetime is one setting for two things that must agree: how far ahead requests expire (by
     * CloudStack's clock), and how long a write whose answer was lost is awaited before it is sent again.
     */
    @Test
    void theConfiguredSignatureLifetimeIsBothTheRequestsExpiryAndTheWaitBeforeALostWriteIsSentAgain() {
        CloudStackClientSettings configured = CloudStackAccess.clientSettings(TestSettings.cloudStack(Optional.of(30), Optional.of(10)));
        assertThat(configured.unansweredWriteWindow()).isEqualTo(Duration.ofSeconds(40));
        CloudStackClient measured = new CloudStackClient(simulator.credentials(), configured, registry, time, time);
        measured.measureClockIfStale();
        simulator.clearCalls();

        // CloudStack's clock moves on without the client knowing: 25 s later a request signed for 30 s is still taken,
        // 35 s later it is refused (then the clock is measured again and it is signed anew).
        simulator.shiftClock(Duration.ofSeconds(25));
        measured.listKubernetesSupportedVersions();
        assertThat(simulator.calls("listKubernetesSupportedVersions")).extracting(RecordedCall::authenticated).containsExactly(true);
        simulator.clearCalls();
        simulator.shiftClock(Duration.ofSeconds(35));
        measured.listKubernetesSupportedVersions();
        assertThat(simulator.calls("listKubernetesSupportedVersions")).extracting(RecordedCall::authenticated).containsExactly(false, true);

        CloudStackClientSettings unset = CloudStackAccess.clientSettings(TestSettings.cloudStack(Optional.empty(), Optional.empty()));
        assertThat(unset).as("the production default, kept in one place").isEqualTo(CloudStackClientSettings.DEFAULTS);
        assertThat(unset.signatureLifetime()).isEqualTo(Duration.ofMinutes(10));
        assertThat(unset.unansweredWriteWindow()).isEqualTo(Duration.ofMinutes(10).plusSeconds(90));
        assertThatThrownBy(() -> CloudStackAccess.clientSettings(TestSettings.cloudStack(Optional.of(-1), Optional.empty())))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void signsWithoutExpiryWhenTurnedOff() {
        CloudStackClient plain = clientFor(simulator.credentials(), CloudStackClientSettings.DEFAULTS.withSignatureLifetime(Duration.ZERO));

        plain.listKubernetesSupportedVersions();

        assertThat(simulator.calls()).singleElement().satisfies(call -> assertThat(call.authenticated()).isTrue());
    }

    @Test
    void namesTheMissingPermissionForACommandTheRoleDoesNotAllow() {
        SimulatedAccount limited = simulator.addAccount("limited", CloudStackSimulator.ROOT_DOMAIN_ID, "limited-key-1234",
                "limited-secret-5678", false);
        simulator.restrictApis(limited, java.util.Set.of("listKubernetesClusters", "queryAsyncJobResult"));
        SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(limited), 1, 2);

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> clientFor(simulator.credentials(limited), CloudStackClientSettings.DEFAULTS)
                        .startScaleKubernetesCluster(cluster.id(), List.of(cluster.vmIds().get(1))));

        assertThat(failure.errorCode()).isEqualTo(432);
        assertThat(failure.isPermissionDenied()).isTrue();
        assertThat(failure.getMessage()).contains("The API key's role must allow scaleKubernetesCluster");
    }

    // ---- metrics ----------------------------------------------------------------------------

    @Test
    void timesEveryCommandByOutcome() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 1);
        client.findKubernetesCluster(cluster.id());
        client.destroyVirtualMachine(simulator.addVm("standalone", Owner.of(simulator.defaultAccount())).id());

        assertThat(registry.get(CloudStackApiMetrics.REQUESTS).tag("command", "listKubernetesClusters").tag("outcome", "success")
                .timer().count()).isEqualTo(1);
        assertThat(registry.get(CloudStackApiMetrics.REQUESTS).tag("command", "destroyVirtualMachine").tag("outcome", "success")
                .timer().count()).isEqualTo(1);
        assertThat(registry.get(CloudStackApiMetrics.REQUESTS).tag("command", "queryAsyncJobResult").tag("outcome", "success")
                .timer().count()).isEqualTo(1);
    }
}
