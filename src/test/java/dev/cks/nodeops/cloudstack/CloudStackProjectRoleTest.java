package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.cloudstack.simulator.SimulatedAccount;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Shape: a project cluster whose keys CloudStack restricts to the Kubernetes Service User role. The simulator
 * plays that role as CloudStack defines it, and the client finds out, without side effects, what the keys may call.
 */
class CloudStackProjectRoleTest {

    private final ManualTime time = new ManualTime();
    private CloudStackSimulator simulator;
    private SimulatedAccount serviceUser;

    @BeforeEach
    void start() {
        simulator = CloudStackSimulator.start(0, time);
        serviceUser = simulator.addAccount("kubeadmin-3f2a", CloudStackSimulator.ROOT_DOMAIN_ID, "ksu-key-1234", "ksu-secret-5678", false);
        simulator.playProjectKubernetesServiceRole(serviceUser);
    }

    @AfterEach
    void stop() {
        simulator.close();
    }

    private CloudStackClient clientFor(SimulatedAccount account) {
        return new CloudStackClient(simulator.credentials(account), CloudStackClientSettings.DEFAULTS, new SimpleMeterRegistry(), time, time, () -> 1.0);
    }

    /** KubernetesClusterManagerImpl.PROJECT_KUBERNETES_ACCOUNT_ROLE_ALLOWED_APIS, as its commands are named; a change is a new CloudStack fact. */
    @Test
    void theRoleIsExactlyCloudStacksList() {
        assertThat(CloudStackSimulator.PROJECT_KUBERNETES_SERVICE_ROLE).containsExactlyInAnyOrder("queryAsyncJobResult", "listVirtualMachines",
                "listNetworks", "listPublicIpAddresses", "associateIpAddress", "disassociateIpAddress", "listLoadBalancerRules",
                "createLoadBalancerRule", "updateLoadBalancerRule", "deleteLoadBalancerRule", "assignToLoadBalancerRule",
                "removeFromLoadBalancerRule", "listLoadBalancerRuleInstances", "listFirewallRules", "createFirewallRule", "updateFirewallRule",
                "deleteFirewallRule", "listNetworkACLs", "createNetworkACL", "deleteNetworkACL", "listKubernetesClusters",
                "scaleKubernetesCluster");
    }

    @Test
    void ofWhatTheOperatorSendsTheRoleAllowsOnlyTheScaleAndItsReads() {
        Set<String> allowed = Set.of(CloudStackCommand.values()).stream().map(CloudStackCommand::apiName)
                .filter(CloudStackSimulator.PROJECT_KUBERNETES_SERVICE_ROLE::contains).collect(Collectors.toSet());

        assertThat(allowed).containsExactlyInAnyOrder("listKubernetesClusters", "listVirtualMachines", "queryAsyncJobResult",
                "scaleKubernetesCluster");
    }

    @Test
    void aCommandTheRoleDeniesIsRefused432BeforeItsParametersAreChecked() {
        CloudStackClient client = clientFor(serviceUser);

        CloudStackException attach = catchThrowableOfType(CloudStackException.class, () -> client.startAttachIso("no-such-iso", "no-such-vm"));

        assertThat(attach.errorCode()).isEqualTo(432);
        assertThat(attach.isUnsupportedAction()).isTrue();
    }

    @Test
    void anAllowedCommandWithoutItsParametersIsRefused431AndNothingRuns() {
        SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(serviceUser), 1, 2);
        long size = cluster.size();

        Map<CloudStackCommand, Boolean> known = clientFor(serviceUser).permissions(List.of(CloudStackCommand.SCALE_KUBERNETES_CLUSTER));

        assertThat(known).containsEntry(CloudStackCommand.SCALE_KUBERNETES_CLUSTER, true);
        assertThat(simulator.calls("scaleKubernetesCluster")).singleElement().extracting(RecordedCall::params)
                .satisfies(params -> assertThat(params).doesNotContainKeys("id", "nodeids"));
        assertThat(simulator.cluster(cluster.id()).size()).isEqualTo(size);
        assertThat(simulator.calls("queryAsyncJobResult")).isEmpty();
    }

    @Test
    void theServiceUserIsRefusedListApisSoEachNeededCommandIsProbed() {
        Map<CloudStackCommand, Boolean> known = clientFor(serviceUser).permissions(List.of(CloudStackCommand.ATTACH_ISO,
                CloudStackCommand.DETACH_ISO, CloudStackCommand.LIST_KUBERNETES_SUPPORTED_VERSIONS, CloudStackCommand.LIST_VIRTUAL_MACHINES,
                CloudStackCommand.QUERY_ASYNC_JOB_RESULT, CloudStackCommand.LIST_ASYNC_JOBS));

        assertThat(known).containsEntry(CloudStackCommand.ATTACH_ISO, false).containsEntry(CloudStackCommand.DETACH_ISO, false)
                .containsEntry(CloudStackCommand.LIST_KUBERNETES_SUPPORTED_VERSIONS, false).containsEntry(CloudStackCommand.LIST_ASYNC_JOBS, false)
                .containsEntry(CloudStackCommand.LIST_VIRTUAL_MACHINES, true).containsEntry(CloudStackCommand.QUERY_ASYNC_JOB_RESULT, true);
        assertThat(simulator.calls("listApis")).hasSize(1);
    }

    @Test
    void aRoleThatMayListApisIsAnsweredFromOneListAndTheAnswerIsKeptForMinutes() {
        SimulatedAccount operatorRole = simulator.addAccount("ops", CloudStackSimulator.ROOT_DOMAIN_ID, "ops-key-1234", "ops-secret-5678", false);
        simulator.restrictApis(operatorRole, Set.of("listApis", "listKubernetesClusters", "queryAsyncJobResult", "scaleKubernetesCluster"));
        CloudStackClient client = clientFor(operatorRole);

        Map<CloudStackCommand, Boolean> known = client.permissions(List.of(CloudStackCommand.SCALE_KUBERNETES_CLUSTER, CloudStackCommand.LIST_ASYNC_JOBS));
        client.permissions(List.of(CloudStackCommand.ATTACH_ISO));

        assertThat(known).containsEntry(CloudStackCommand.SCALE_KUBERNETES_CLUSTER, true).containsEntry(CloudStackCommand.LIST_ASYNC_JOBS, false);
        assertThat(client.mayCall(CloudStackCommand.ATTACH_ISO)).contains(false);
        assertThat(simulator.calls()).extracting(RecordedCall::command).containsOnly("listApis");
        assertThat(simulator.calls("listApis")).hasSize(1);

        time.advance(CloudStackClient.PERMISSIONS_TTL.plus(Duration.ofSeconds(1)));
        assertThat(client.mayCall(CloudStackCommand.ATTACH_ISO)).isEmpty();
        client.permissions(List.of(CloudStackCommand.ATTACH_ISO));
        assertThat(simulator.calls("listApis")).hasSize(2);
    }

    @Test
    void anUnrestrictedKeyListsEveryCommandTheOperatorSends() {
        Map<CloudStackCommand, Boolean> known = clientFor(simulator.defaultAccount()).permissions(List.of(CloudStackCommand.values()));

        assertThat(known.values()).containsOnly(true);
    }

    @Test
    void a432AnswerIsRememberedAsNotAllowed() {
        CloudStackClient client = clientFor(serviceUser);

        catchThrowableOfType(CloudStackException.class, () -> client.listAsyncJobs(time.instant()));

        assertThat(client.mayCall(CloudStackCommand.LIST_ASYNC_JOBS)).contains(false);
    }
}
