package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.AuditFakes.FakeCloudStack;
import dev.cks.nodeops.audit.AuditFakes.FakeNodes;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.testing.RecordingEvents.RecordedEvent;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.audit.VMMapAuditStatus.Phase;
import dev.cks.nodeops.audit.VmMapFinding.Type;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.Timestamps;
import io.fabric8.kubernetes.api.model.Condition;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class VMMapAuditReconcilerTest {
    private static final Instant START = Instant.parse("2026-11-30T12:00:00Z");
    private static final Instant LONG_AGO = START.minus(Duration.ofDays(2));
    private static final String CONTROL = "prod-control-18c2f3a9b0";
    private static final String WORKER = "prod-node-18c2f3a9b1";

    private final ManualTime clock = new ManualTime(START);
    private final FakeCloudStack cloudStack = new FakeCloudStack();
    private final FakeNodes nodes = new FakeNodes();
    private final RecordingEvents events = new RecordingEvents();
    private AuditSettings settings = AuditSettings.DEFAULTS;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private VMMapAuditReconciler reconciler = newReconciler();
    private final VMMapAudit audit = AuditFakes.audit("c-1");

    private VMMapAuditReconciler newReconciler() {
        return new VMMapAuditReconciler(clock, cloudStack, settings, events, new AuditMetrics(registry), nodes);
    }

    VMMapAuditReconcilerTest() {
        healthyCluster("Running");
    }

    private void healthyCluster(String state) {
        cloudStack.cluster = new ClusterView("c-1", "prod", state, "CloudManaged",
                List.of(new MappedVm("v1", CONTROL, "Running"), new MappedVm("v2", WORKER, "Running")));
        cloudStack.ownerVms = new ArrayList<>(List.of(vm("v1", CONTROL, "Running"), vm("v2", WORKER, "Running")));
        nodes.current = ClusterNodes.of(List.of(new NodeView(CONTROL, LONG_AGO), new NodeView(WORKER, LONG_AGO)));
    }

    private static OwnedVm vm(String id, String name, String state) {
        return new OwnedVm(id, name, state, LONG_AGO, null);
    }

    private void destroyWorker() {
        cloudStack.ownerVms.set(1, vm("v2", WORKER, "Destroyed"));
    }

    private UpdateControl<VMMapAudit> reconcile() {
        UpdateControl<VMMapAudit> control = reconciler.reconcile(audit, null);
        clock.advance(Duration.ofMinutes(5));
        return control;
    }

    private VMMapAuditStatus status() {
        return audit.getStatus();
    }

    private Condition condition(String type) {
        return Conditions.find(status().getConditions(), type).orElseThrow();
    }

    /** What the status counts of one type; {@code monitoring.StatusMetrics} exports it as cks_vmmap_findings. */
    private int findingCount(Type type) {
        return status().getFindingCounts().getOrDefault(type.name(), 0);
    }

    @Test
    void aClusterInSyncIsReportedAsSuchWithoutEvents() {
        UpdateControl<VMMapAudit> control = reconcile();
        assertThat(control.isPatchStatus()).isTrue();
        assertThat(control.getScheduleDelay()).contains(Duration.ofSeconds(300).toMillis());
        assertThat(status().getPhase()).isEqualTo(Phase.InSync);
        assertThat(status().getFindingCount()).isZero();
        assertThat(condition(Conditions.IN_SYNC).getStatus()).isEqualTo("True");
        assertThat(condition(Conditions.CLOUDSTACK_REACHABLE).getStatus()).isEqualTo("True");
        assertThat(status().getLastRun().getStartedAt()).isEqualTo("2026-11-30T12:00:00Z");
        assertThat(status().getLastRun().getCloudStackCalls()).isEqualTo(4);
        assertThat(status().getLastRun().getClusterState()).isEqualTo("Running");
        assertThat(status().getClusterId()).isEqualTo("c-1");
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void theStatusIsWrittenWithoutAVersionCheckSoAnEditDuringTheRunCannotMakeItAnnounceTwice() {
        audit.getMetadata().setResourceVersion("41");
        destroyWorker();
        UpdateControl<VMMapAudit> control = reconcile();
        assertThat(events.all()).hasSize(1);
        assertThat(control.isPatchStatus()).isTrue();
        assertThat(control.getResource().orElseThrow().getMetadata().getResourceVersion()).isNull();
    }

    @Test
    void theIntervalComesFromTheSpec() {
        audit.getSpec().setIntervalSeconds(60);
        assertThat(reconcile().getScheduleDelay()).contains(60_000L);
    }

    @Test
    void unsetIntervalAndGraceComeFromTheOperatorsSettings() {
        settings = new AuditSettings(true, 120, 60);
        reconciler = newReconciler();
        cloudStack.ownerVms.add(new OwnedVm("u1", "prod-node-aaaaaaaa01", "Running", START.minus(Duration.ofMinutes(2)), null));
        assertThat(reconcile().getScheduleDelay()).contains(120_000L);
        assertThat(status().getFindings()).extracting(VmMapFinding::getType).as("2 minutes old, grace 1").containsExactly(Type.UnmappedVm);
    }

    @Test
    void driftIsAnnouncedOnceAndKeptInStatus() {
        destroyWorker();
        reconcile();
        assertThat(events.drain()).containsExactly(new RecordedEvent("Warning", "VmMapDrift",
                "VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Destroyed."));
        assertThat(status().getPhase()).isEqualTo(Phase.DriftFound);
        assertThat(status().getFindings()).extracting(VmMapFinding::getType, VmMapFinding::getKey, VmMapFinding::getFirstSeen)
                .containsExactly(tuple(Type.MappedVmDestroyed, "vm:v2", "2026-11-30T12:00:00Z"));
        assertThat(status().getReportedKeys()).containsExactly("vm:v2");
        assertThat(condition(Conditions.IN_SYNC)).extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
                .containsExactly("False", "DriftFound", "1 finding in cluster prod.");

        reconcile();
        assertThat(events.drain()).as("the same finding is not announced again").isEmpty();
    }

    @Test
    void aRestartedOperatorDoesNotAnnounceAgain() {
        destroyWorker();
        reconcile();
        events.drain();
        VMMapAuditReconciler afterRestart = newReconciler();
        afterRestart.reconcile(audit, null);
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void cleanAgainGivesOneNormalEventAndInSync() {
        destroyWorker();
        reconcile();
        events.drain();
        healthyCluster("Running");
        reconcile();
        assertThat(events.drain()).containsExactly(new RecordedEvent("Normal", "VmMapInSync",
                "Cluster prod is in sync again: its VM map, VMs and Nodes agree."));
        assertThat(condition(Conditions.IN_SYNC).getStatus()).isEqualTo("True");
        assertThat(status().getFindings()).isEmpty();
        assertThat(status().getReportedKeys()).isEmpty();
        reconcile();
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void manyNewFindingsAreCappedWithASummary() {
        List<OwnedVm> vms = new ArrayList<>(cloudStack.ownerVms);
        for (int i = 0; i < 7; i++) {
            vms.add(vm("u" + i, "prod-node-aaaaaaaa0" + i, "Running"));
        }
        cloudStack.ownerVms = vms;
        audit.getSpec().setMaxEventsPerRun(3);
        reconcile();
        List<RecordedEvent> announced = events.drain();
        assertThat(announced).hasSize(4).allMatch(e -> e.type().equals("Warning"));
        assertThat(announced.get(3).message()).isEqualTo("4 more new findings in cluster prod; see status.findings of VMMapAudit cluster.");
        assertThat(status().getFindingCount()).isEqualTo(7);
    }

    @Test
    void unsettledClustersAreSkippedWithTheReason() {
        for (String state : List.of("Starting", "Scaling", "Upgrading", "Stopped", "Destroying", "Error")) {
            healthyCluster(state);
            cloudStack.calls.clear();
            UpdateControl<VMMapAudit> control = reconcile();
            assertThat(status().getPhase()).as(state).isEqualTo(Phase.Skipped);
            assertThat(condition(Conditions.IN_SYNC)).extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
                    .containsExactly("Unknown", "ClusterNotSettled",
                            "Cluster prod is " + state + "; the audit runs when CloudStack reports it Running or Alert.");
            assertThat(cloudStack.calls).as("no VMs are read").containsExactly("cluster c-1");
            assertThat(control.getScheduleDelay()).isPresent();
        }
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void anAlertClusterIsAudited() {
        healthyCluster("Alert");
        destroyWorker();
        reconcile();
        assertThat(status().getPhase()).isEqualTo(Phase.DriftFound);
    }

    @Test
    void externalManagedClustersAreSkipped() {
        cloudStack.cluster = new ClusterView("c-1", "prod", "Running", "ExternalManaged", List.of());
        reconcile();
        assertThat(status().getPhase()).isEqualTo(Phase.Skipped);
        assertThat(condition(Conditions.IN_SYNC)).extracting(Condition::getStatus, Condition::getReason).containsExactly("Unknown", "ExternalManaged");
        assertThat(status().getMessage()).isEqualTo(
                "Cluster prod is ExternalManaged: CloudStack does not manage its nodes' VMs, so there is no VM map to audit.");
    }

    @Test
    void skippingKeepsEarlierFindings() {
        destroyWorker();
        reconcile();
        cloudStack.cluster = new ClusterView("c-1", "prod", "Scaling", "CloudManaged", cloudStack.cluster.map());
        reconcile();
        assertThat(status().getFindings()).extracting(VmMapFinding::getKey).containsExactly("vm:v2");
        assertThat(status().getReportedKeys()).containsExactly("vm:v2");
    }

    @Test
    void aClusterThatChangedDuringTheCheckReportsNothing() {
        destroyWorker();
        ClusterView scaled = new ClusterView("c-1", "prod", "Running", "CloudManaged", List.of(new MappedVm("v1", CONTROL, "Running")));
        cloudStack.queuedReadings.add(Optional.of(cloudStack.cluster));
        cloudStack.queuedReadings.add(Optional.of(scaled));
        reconcile();
        assertThat(events.drain()).isEmpty();
        assertThat(status().getFindings()).isEmpty();
        assertThat(status().getReportedKeys()).isEmpty();
        assertThat(status().getLastRun().getNote()).isEqualTo(
                "Cluster prod changed during the check (state or VM map); nothing was reported and the next run checks again.");
    }

    @Test
    void aStateChangeDuringTheCheckReportsNothing() {
        destroyWorker();
        cloudStack.queuedReadings.add(Optional.of(cloudStack.cluster));
        cloudStack.queuedReadings.add(Optional.of(new ClusterView("c-1", "prod", "Scaling", "CloudManaged", cloudStack.cluster.map())));
        reconcile();
        assertThat(events.drain()).isEmpty();
        assertThat(status().getPhase()).isNotEqualTo(Phase.DriftFound);
    }

    @Test
    void aClusterDeletedDuringTheCheckReportsNothing() {
        destroyWorker();
        cloudStack.queuedReadings.add(Optional.of(cloudStack.cluster));
        cloudStack.queuedReadings.add(Optional.empty());
        reconcile();
        assertThat(events.drain()).isEmpty();
    }

    @Test
    void reorderedOrDuplicatedMapRowsAreNoChange() {
        cloudStack.queuedReadings.add(Optional.of(cloudStack.cluster));
        cloudStack.queuedReadings.add(Optional.of(new ClusterView("c-1", "prod", "running", "CloudManaged",
                List.of(new MappedVm("v2", WORKER, "Running"), new MappedVm("v1", CONTROL, "Running"), new MappedVm("v1", null, null)))));
        reconcile();
        assertThat(status().getPhase()).isEqualTo(Phase.InSync);
    }

    @Test
    void withoutTheNodeListOnlyMapAndVmsAreComparedAndNodeFindingsAreKept() {
        nodes.current = ClusterNodes.of(List.of(new NodeView(CONTROL, LONG_AGO), new NodeView(WORKER, LONG_AGO),
                new NodeView("laptop-of-bob", LONG_AGO)));
        reconcile();
        assertThat(events.drain()).extracting(RecordedEvent::message).containsExactly("Node laptop-of-bob matches no VM of cluster prod.");

        nodes.current = ClusterNodes.unavailable("the operator's watch on Nodes is not healthy");
        destroyWorker();
        reconcile();
        assertThat(events.drain()).extracting(RecordedEvent::message)
                .containsExactly("VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Destroyed.");
        assertThat(status().getFindings()).extracting(VmMapFinding::getKey).containsExactlyInAnyOrder("vm:v2", "node:laptop-of-bob");
        assertThat(status().getLastRun().getNote()).isEqualTo("Only the VM map and the VMs were compared: the operator's watch"
                + " on Nodes is not healthy.");

        nodes.current = ClusterNodes.of(List.of(new NodeView(CONTROL, LONG_AGO), new NodeView(WORKER, LONG_AGO),
                new NodeView("laptop-of-bob", LONG_AGO)));
        reconcile();
        assertThat(events.drain()).as("bob is not announced again").isEmpty();
        assertThat(status().getLastRun().getNote()).isNull();
    }

    @Test
    void theGracePeriodComesFromTheSpecAndTheClock() {
        audit.getSpec().setGracePeriodSeconds(600);
        cloudStack.ownerVms.add(new OwnedVm("u1", "prod-node-aaaaaaaa01", "Running", START.minus(Duration.ofMinutes(6)), null));
        reconcile();
        assertThat(status().getFindingCount()).as("6 minutes old, grace 10").isZero();
        reconcile();
        assertThat(status().getFindingCount()).as("11 minutes old").isEqualTo(1);
        assertThat(status().getFindings().get(0).getType()).isEqualTo(Type.UnmappedVm);
    }

    @Test
    void suspendStopsTheAuditUntilTheSpecChanges() {
        audit.getSpec().setSuspend(true);
        UpdateControl<VMMapAudit> control = reconcile();
        assertThat(cloudStack.calls).isEmpty();
        assertThat(control.getScheduleDelay()).isEmpty();
        assertThat(status().getPhase()).isEqualTo(Phase.Suspended);
        assertThat(condition(Conditions.IN_SYNC)).extracting(Condition::getStatus, Condition::getReason, Condition::getMessage)
                .containsExactly("Unknown", "Suspended", "Auditing is suspended; set spec.suspend to false to resume it.");
    }

    @Test
    void theGlobalSettingTurnsEveryAuditOff() {
        settings = AuditSettings.DEFAULTS.withEnabled(false);
        reconciler = newReconciler();
        UpdateControl<VMMapAudit> control = reconcile();
        assertThat(cloudStack.calls).isEmpty();
        assertThat(control.getScheduleDelay()).isEmpty();
        assertThat(status().getPhase()).isEqualTo(Phase.Suspended);
        assertThat(status().getMessage())
                .isEqualTo("Auditing is turned off for the whole operator; set the Helm value audit.enabled to true to turn it on.");
    }

    @Test
    void unreachableCloudStackKeepsFindingsAndSaysSo() {
        destroyWorker();
        reconcile();
        cloudStack.failure = new AuditSourceException("CloudStack listVirtualMachines got no answer (no HTTP status).");
        UpdateControl<VMMapAudit> control = reconcile();
        assertThat(control.getScheduleDelay()).contains(300_000L);
        assertThat(status().getPhase()).isEqualTo(Phase.Error);
        assertThat(condition(Conditions.CLOUDSTACK_REACHABLE)).extracting(Condition::getStatus, Condition::getMessage)
                .containsExactly("False", "CloudStack listVirtualMachines got no answer (no HTTP status).");
        assertThat(condition(Conditions.IN_SYNC).getStatus()).isEqualTo("Unknown");
        assertThat(status().getFindings()).extracting(VmMapFinding::getKey).containsExactly("vm:v2");
        assertThat(status().getLastRun().getCloudStackCalls()).isEqualTo(1);

        cloudStack.failure = null;
        reconcile();
        assertThat(condition(Conditions.CLOUDSTACK_REACHABLE).getStatus()).isEqualTo("True");
        assertThat(events.drain()).as("only the first run announced").hasSize(1);
    }

    @Test
    void anUnknownClusterIdIsAnError() {
        VMMapAudit other = AuditFakes.audit("c-404");
        reconciler.reconcile(other, null);
        assertThat(other.getStatus().getPhase()).isEqualTo(Phase.Error);
        assertThat(other.getStatus().getMessage()).isEqualTo("CloudStack has no Kubernetes cluster with id c-404 visible to these API keys.");
        assertThat(Conditions.find(other.getStatus().getConditions(), Conditions.IN_SYNC).orElseThrow().getReason()).isEqualTo("ClusterNotFound");
    }

    @Test
    void anEmptyClusterIdIsLeftToTheSourceToResolve() {
        VMMapAudit unnamed = AuditFakes.audit("");
        reconciler.reconcile(unnamed, null);
        assertThat(cloudStack.calls.get(0)).isEqualTo("cluster ");
        assertThat(unnamed.getStatus().getPhase()).isEqualTo(Phase.InSync);
        assertThat(unnamed.getStatus().getClusterId()).as("the resolved id is recorded").isEqualTo("c-1");
    }

    @Test
    void withoutNodesAFoundClusterIsLookedUpByItsRecordedId() {
        VMMapAudit unnamed = AuditFakes.audit("");
        reconciler.reconcile(unnamed, null);
        nodes.current = ClusterNodes.unavailable(InformerNodeSource.NOT_WATCHING);
        cloudStack.calls.clear();
        reconciler.reconcile(unnamed, null);
        assertThat(cloudStack.calls.get(0)).isEqualTo("cluster c-1");
        assertThat(unnamed.getStatus().getPhase()).isEqualTo(Phase.InSync);
    }

    @Test
    void aClusterNotFoundWhileTheNodesAreUnreadableSaysBoth() {
        nodes.current = ClusterNodes.unavailable(InformerNodeSource.NOT_WATCHING);
        VMMapAudit other = AuditFakes.audit("c-404");
        reconciler.reconcile(other, null);
        assertThat(other.getStatus().getMessage()).isEqualTo("CloudStack has no Kubernetes cluster with id c-404 visible to these"
                + " API keys. Finding the cluster by its Nodes was not possible: the operator's watch on Nodes is not healthy.");
    }

    @Test
    void statusCountsCurrentFindingsByTypeAndKeepsTheLastCompleteRunAndMetricsTimeRuns() {
        destroyWorker();
        reconcile();
        assertThat(findingCount(Type.MappedVmDestroyed)).isEqualTo(1);
        assertThat(findingCount(Type.UnmappedVm)).isZero();
        healthyCluster("Running");
        reconcile();
        assertThat(findingCount(Type.MappedVmDestroyed)).isZero();
        assertThat(registry.get(AuditMetrics.DURATION).tag("audit", "cluster").timer().count()).isEqualTo(2);
        assertThat(status().getLastCompleteRunAt()).isEqualTo(Timestamps.format(START.plus(Duration.ofMinutes(5))));
    }

    @Test
    void runsAreCountedByOutcome() {
        reconcile();
        healthyCluster("Scaling");
        reconcile();
        cloudStack.failure = new AuditSourceException("CloudStack listKubernetesClusters got no answer.");
        reconcile();
        assertThat(registry.get(AuditMetrics.RUNS).tag("outcome", "complete").counter().count()).isEqualTo(1);
        assertThat(registry.get(AuditMetrics.RUNS).tag("outcome", "skipped").counter().count()).isEqualTo(1);
        assertThat(registry.get(AuditMetrics.RUNS).tag("outcome", "unreachable").counter().count()).isEqualTo(1);
    }

    @Test
    void theRunDurationIsMeasuredWithTheClock() {
        AuditSource slow = new AuditSource() {
            @Override
            public ClusterLookup cluster(String clusterId, java.util.Collection<String> nodeNames) {
                return cloudStack.cluster(clusterId, nodeNames);
            }

            @Override
            public List<OwnedVm> ownerVms(ClusterView cluster) {
                clock.advance(Duration.ofMillis(412));
                return cloudStack.ownerVms(cluster);
            }

            @Override
            public java.util.Set<String> otherClustersMappedIds(ClusterView cluster) {
                return cloudStack.otherClustersMappedIds(cluster);
            }
        };
        new VMMapAuditReconciler(clock, slow, settings, events, new AuditMetrics(registry), nodes).reconcile(audit, null);
        assertThat(status().getLastRun().getDurationMillis()).isEqualTo(412);
    }

    @Test
    void pointingTheAuditAtAnotherClusterStartsAfresh() {
        nodes.current = ClusterNodes.of(List.of(new NodeView(CONTROL, LONG_AGO), new NodeView(WORKER, LONG_AGO),
                new NodeView("laptop-of-bob", LONG_AGO)));
        reconcile();
        assertThat(status().getReportedKeys()).containsExactly("node:laptop-of-bob");
        cloudStack.cluster = new ClusterView("c-2", "staging", "Running", "CloudManaged", List.of());
        nodes.current = ClusterNodes.unavailable(InformerNodeSource.NOT_WATCHING);
        audit.getSpec().setClusterId("c-2");
        reconcile();
        assertThat(status().getClusterId()).isEqualTo("c-2");
        assertThat(status().getFindings()).as("prod's node finding is not carried to staging").isEmpty();
        assertThat(status().getReportedKeys()).isEmpty();
    }
}
