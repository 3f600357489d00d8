package dev.cks.nodeops.audit;

import dev.cks.nodeops.testing.RecordingEvents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.audit.VmMapFinding.Type;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackClientSettings;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The adapter against the in-process CloudStack simulator: what the audit's records hold, and one whole pass. */
class CloudStackAuditSourceTest {
    private static final Instant CREATED = Instant.parse("2026-11-30T10:00:00Z");

    private final CloudStackSimulator simulator = CloudStackSimulator.start(0, Clock.fixed(CREATED, ZoneOffset.UTC));
    private final CloudStackClient client = new CloudStackClient(simulator.credentials(), CloudStackClientSettings.DEFAULTS,
            new SimpleMeterRegistry(), Clock.fixed(CREATED, ZoneOffset.UTC), duration -> { });
    private final CloudStackAuditSource source = new CloudStackAuditSource(
            (id, nodeNames) -> client.findKubernetesCluster(id).map(cluster -> new ClusterResolution(Optional.of(cluster), null))
                    .orElseGet(() -> new ClusterResolution(Optional.empty(), "no cluster " + id)),
            () -> client);
    private final SimulatedCluster prod = simulator.addCluster("prod", 1, 2);

    @AfterEach
    void stop() {
        simulator.close();
    }

    private ClusterView prodView() {
        return source.cluster(prod.id(), List.of()).cluster().orElseThrow();
    }

    @Test
    void theClusterBecomesItsViewWithMapOwnerAndCount() {
        ClusterView view = prodView();
        assertThat(view.id()).isEqualTo(prod.id());
        assertThat(view.name()).isEqualTo("prod");
        assertThat(view.state()).isEqualTo("Running");
        assertThat(view.isCloudManaged()).isTrue();
        assertThat(view.map()).extracting(MappedVm::id).containsExactlyElementsOf(prod.vmIds());
        assertThat(view.map()).extracting(MappedVm::state).containsOnly("Running");
        assertThat(view.owner()).isEqualTo(new ClusterView.Owner("admin", CloudStackSimulator.ROOT_DOMAIN_ID, null));
        assertThat(view.declaredVmCount()).isEqualTo(3);
    }

    @Test
    void aRefusalIsASentence() {
        assertThat(source.cluster("nope", List.of()).refusal()).isEqualTo("No cluster nope.");
    }

    @Test
    void destroyedAndExpungedMembersShowAsTheServerShowsThem() {
        String destroyed = prod.vmIds().get(1);
        String expunged = prod.vmIds().get(2);
        simulator.destroyVm(destroyed, false);
        simulator.destroyVm(expunged, true);
        ClusterView view = prodView();
        assertThat(view.map()).extracting(MappedVm::id, MappedVm::state)
                .containsExactly(tuple(prod.vmIds().get(0), "Running"), tuple(destroyed, "Destroyed"));
        assertThat(view.declaredVmCount()).as("CloudStack still counts the expunged VM").isEqualTo(3);
    }

    @Test
    void ownerVmsAreThoseNamedLikeTheClusterWithTheirTimes() {
        SimulatedVm stray = simulator.addVm("prod-node-18c2f3a9b1", prod.owner());
        simulator.addVm("jump-host", prod.owner());
        simulator.addCluster("staging", 0, 1);
        List<OwnedVm> vms = source.ownerVms(prodView());
        assertThat(vms).extracting(OwnedVm::id).containsExactlyInAnyOrder(
                prod.vmIds().get(0), prod.vmIds().get(1), prod.vmIds().get(2), stray.id());
        assertThat(vms).extracting(OwnedVm::created).containsOnly(CREATED);
    }

    @Test
    void otherClustersMapsExcludeThisOne() {
        SimulatedCluster staging = simulator.addCluster("staging", 0, 2);
        assertThat(source.otherClustersMappedIds(prodView())).containsExactlyInAnyOrderElementsOf(staging.vmIds());
    }

    @Test
    void aCloudStackErrorBecomesAnAuditSourceExceptionWithTheReason() {
        ClusterView view = prodView();
        simulator.injectFault("listVirtualMachines", new Fault.ApiErrorAnswer(432, 9999,
                "The given command does not exist or it is not available for user"));
        assertThatThrownBy(() -> source.ownerVms(view)).isInstanceOf(AuditSourceException.class)
                .hasMessageContaining("listVirtualMachines")
                .hasMessageContaining("The API key's role must allow listVirtualMachines.");
    }

    @Test
    void aWholePassFindsADestroyedWorker() {
        String worker = prod.vmIds().get(2);
        simulator.destroyVm(worker, false);
        List<NodeView> nodes = simulator.clusterVms(prod.id()).stream()
                .map(vm -> new NodeView(vm.name(), CREATED)).toList();
        RecordingEvents events = new RecordingEvents();
        AuditPass pass = new AuditPass(Clock.fixed(CREATED.plus(Duration.ofHours(1)), ZoneOffset.UTC), source,
                () -> ClusterNodes.of(nodes), AuditSettings.DEFAULTS, events, new AuditMetrics(new SimpleMeterRegistry()));

        VMMapAuditStatus status = pass.run(AuditFakes.audit(prod.id())).status();

        assertThat(status.getFindings()).extracting(VmMapFinding::getType, VmMapFinding::getVmId)
                .containsExactly(tuple(Type.MappedVmDestroyed, worker));
        assertThat(status.getLastRun().getCloudStackCalls()).isEqualTo(4);
        assertThat(events.drain()).hasSize(1);
    }

    @Test
    void aWorkerDestroyedThenExpungedIsOneFindingAndOneEvent() {
        String worker = prod.vmIds().get(2);
        List<NodeView> nodes = simulator.clusterVms(prod.id()).stream().map(vm -> new NodeView(vm.name(), CREATED)).toList();
        RecordingEvents events = new RecordingEvents();
        AuditPass pass = new AuditPass(Clock.fixed(CREATED.plus(Duration.ofHours(1)), ZoneOffset.UTC), source,
                () -> ClusterNodes.of(nodes), AuditSettings.DEFAULTS, events, new AuditMetrics(new SimpleMeterRegistry()));
        VMMapAudit audit = AuditFakes.audit(prod.id());

        simulator.destroyVm(worker, false);
        audit.setStatus(pass.run(audit).status());
        simulator.destroyVm(worker, true);
        audit.setStatus(pass.run(audit).status());

        assertThat(audit.getStatus().getFindings()).extracting(VmMapFinding::getType, VmMapFinding::getKey)
                .containsExactly(tuple(Type.MappedVmMissing, "vm:" + worker));
        assertThat(events.drain()).as("only the destroy was announced").hasSize(1);
    }
}
