package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.audit.VmMapFinding.Type;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.monitoring.MetricsDocTest;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetricsV2;

/**
 * The packaged operator audits a CKS cluster held by the CloudStack simulator against the test bed's
 * Nodes: every kind of drift is announced once, survives a restart without being announced again,
 * and clears with one Normal event, while neither CloudStack nor the Nodes are touched.
 */
@ExtendWith(TestBedExtension.class)
class VMMapAuditIT {
    /** CKS cluster name, and so the prefix of its node and VM names; no other test class uses it. */
    private static final String CLUSTER = "aud";
    private static final String AUDIT = "aud-vmmap";
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
    private static final Pattern METRIC_LINE = Pattern.compile("^(\\w+)\\{([^}]*)}\\s+(\\S+)$");
    /** A sample of one of the operator SDK's metrics (JOSDK's MicrometerMetricsV2), its suffix and labels apart. */
    private static final Pattern FRAMEWORK_SAMPLE = Pattern.compile("^((?:reconciliations|events_received|custom_resources)[a-z_]*?)(_count|_sum|_max|_bucket)?(?:\\{([^}]*)\\})? ");
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    private TestBed bed;
    private KubernetesClient client;
    private CloudStackFixture cloudStack;
    private OperatorProcess operator;
    private Map<String, String> operatorProperties;
    private final List<String> nodesOfThisTest = new ArrayList<>();

    @BeforeEach
    void setUp(TestBed testBed) {
        bed = testBed;
        client = bed.client();
    }

    @AfterEach
    void tearDown() {
        if (operator != null) {
            operator.close();
        }
        client.resources(VMMapAudit.class).withName(AUDIT).delete();
        client.v1().events().inNamespace(EventRecorder.NAMESPACE).withField("involvedObject.name", AUDIT).delete();
        nodesOfThisTest.forEach(name -> client.nodes().withName(name).delete());
        if (cloudStack != null) {
            cloudStack.close();
        }
    }

    @Test
    void reportsEachDriftOnceAcrossRunsAndRestartsAndChangesNothing() throws IOException {
        Node control = addNode(bed.addControlPlane(CLUSTER));
        Node lostWorker = addNode(bed.addWorker(CLUSTER));
        addNode(bed.addWorker(CLUSTER));
        // The operator audits every Node of the Kubernetes cluster it runs in, and the bed's own
        // Nodes belong to it too; so the CKS cluster's map holds a VM for each Node there is.
        cloudStack = CloudStackFixture.forNodes(bed, CLUSTER, "CloudManaged", client.nodes().list().getItems());
        CloudStackSimulator simulator = cloudStack.simulator();
        Map<String, NodeFacts> nodesBefore = nodeFacts();
        operatorProperties = new LinkedHashMap<>(cloudStack.operatorProperties());
        operatorProperties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
        operator = OperatorProcess.start(bed, "vmmapaudit", operatorProperties);
        createAudit();

        // A clean cluster: in sync, nothing announced.
        VMMapAuditStatus clean = awaitAudit("the first run finds the cluster in sync",
                status -> Conditions.isTrue(status.getConditions(), Conditions.IN_SYNC));
        assertThat(clean.getFindings()).isEmpty();
        assertThat(clean.getClusterId()).isEqualTo(cloudStack.cluster().id());
        assertThat(Conditions.isTrue(clean.getConditions(), Conditions.CLOUDSTACK_REACHABLE)).isTrue();
        assertThat(events()).as("a cluster that was never out of sync gets no event").isEmpty();

        // A mapped worker VM destroyed behind CKS's back: one finding, one Warning event. The audit is
        // edited (a label, as a GitOps tool adds) while that run waits for CloudStack: the run's status
        // must still be written, or the retry would announce the same finding a second time.
        String lostVmId = cloudStack.vmId(lostWorker.getMetadata().getName());
        simulator.destroyVm(lostVmId, false);
        simulator.injectFault("listVirtualMachines", Fault.slow(Duration.ofSeconds(3)));
        int vmListsBefore = simulator.calls("listVirtualMachines").size();
        long generation = changeSpec();
        Awaitility.await("a run waiting for CloudStack's VM list").atMost(RUN_TIMEOUT).pollInterval(Duration.ofMillis(100))
                .until(() -> simulator.calls("listVirtualMachines").size() > vmListsBefore);
        audit().edit(audit -> {
            audit.getMetadata().setLabels(Map.of("example.com/edited-during-run", "true"));
            return audit;
        });
        awaitRun(generation);
        VMMapAuditStatus destroyed = awaitAudit("the destroyed VM is found", status -> status.getFindings().size() == 1);
        VmMapFinding lostVm = destroyed.getFindings().get(0);
        assertThat(lostVm.getType()).isEqualTo(Type.MappedVmDestroyed);
        assertThat(lostVm.getKey()).isEqualTo("vm:" + lostVmId);
        assertThat(lostVm.getVmName()).isEqualTo(lostWorker.getMetadata().getName());
        assertThat(Conditions.isTrue(destroyed.getConditions(), Conditions.IN_SYNC)).isFalse();
        assertThat(warnings()).singleElement().extracting(Event::getMessage).asString().contains(lostVmId);

        // Three more runs see the same drift and announce nothing: the first comes from the interval
        // alone (so the reschedule works on the bed), the others from spec changes to save time.
        awaitRunByInterval();
        runAudit();
        runAudit();
        assertThat(status().getFindings()).extracting(VmMapFinding::getKey).containsExactly(lostVm.getKey());
        assertThat(warnings()).hasSize(1);

        // Expunged: CloudStack drops it from the cluster's answer but still counts it; the finding
        // keeps its key and first-seen time, so it is not announced again.
        simulator.destroyVm(lostVmId, true);
        VMMapAuditStatus expunged = awaitAudit("the expunged VM is still the one finding",
                status -> status.getFindings().size() == 1 && status.getFindings().get(0).getType() == Type.MappedVmMissing);
        assertThat(expunged.getFindings().get(0).getKey()).isEqualTo(lostVm.getKey());
        assertThat(expunged.getFindings().get(0).getFirstSeen()).isEqualTo(lostVm.getFirstSeen());
        assertThat(warnings()).hasSize(1);

        // A VM named as a node of this cluster but in no map (grace period 0, so it counts at once).
        String strayVmId = simulator.addVm(CLUSTER + "-node-0a1b2c3d4e", Owner.of(simulator.defaultAccount())).id();
        awaitAudit("the unmapped VM is found", status -> keys(status).contains("unmapped:" + strayVmId));
        assertThat(keys(status())).containsExactlyInAnyOrder(lostVm.getKey(), "unmapped:" + strayVmId);
        assertThat(warnings()).hasSize(2).anySatisfy(event -> assertThat(event.getMessage()).contains(strayVmId));

        // Killed (SIGKILL) and started again: the reported keys live in the status, so the new
        // process announces nothing it has announced before.
        operator.kill();
        operator.expireItsLease();
        operator = OperatorProcess.start(bed, "vmmapaudit-restarted", operatorProperties);
        Awaitility.await("a complete run of the restarted operator").atMost(RUN_TIMEOUT).pollInterval(Duration.ofSeconds(1))
                .until(() -> metric("cks_vmmap_audit_runs_total", "outcome", "complete") >= 1);
        assertThat(reconcilesStarted("vmmapaudit")).as("the operator SDK's reconcile counter on /q/metrics (ReconcileMetrics), not a no-op")
                .isPositive();
        assertThat(frameworkMetricsNotAsDocumented()).as("the operator SDK's metrics docs/metrics.md lists, compared with /q/metrics").isEmpty();
        runAudit();
        assertThat(keys(status())).containsExactlyInAnyOrder(lostVm.getKey(), "unmapped:" + strayVmId);
        assertThat(warnings()).as("no event repeated after the restart").hasSize(2);
        assertThat(findingsMetric()).containsEntry(Type.MappedVmMissing, 1.0).containsEntry(Type.UnmappedVm, 1.0)
                .containsEntry(Type.NodeWithoutVm, 0.0);

        // A Node that no VM of the cluster backs.
        String strayNode = addNode(bed.addWorker(CLUSTER)).getMetadata().getName();
        awaitAudit("the Node without a VM is found", status -> keys(status).contains("node:" + strayNode));
        assertThat(status().getFindings()).hasSize(3);
        assertThat(warnings()).hasSize(3).anySatisfy(event -> assertThat(event.getMessage()).contains(strayNode));
        assertThat(findingsMetric()).as("one finding of each kind there is, zero of the others").isEqualTo(Map.of(
                Type.MappedVmMissing, 1.0, Type.MappedVmDestroyed, 0.0, Type.MappedVmExpunged, 0.0, Type.MappedVmError, 0.0,
                Type.UnmappedVm, 1.0, Type.NodeWithoutVm, 1.0, Type.VmNotANode, 0.0, Type.VersionRecordStale, 0.0));

        // Fix everything. The Nodes go first, the lost VM's before the stray one: once the audit no
        // longer sees the stray Node, its cache has seen both deletions, so no run can see the lost
        // worker's Node after its VM left the map (which would be a new, false finding).
        deleteNode(lostWorker.getMetadata().getName());
        deleteNode(strayNode);
        simulator.destroyVm(strayVmId, true);
        awaitAudit("only the lost VM is left", status -> keys(status).equals(List.of(lostVm.getKey())));
        simulator.repairClusterMap(cloudStack.cluster().id(), lostVmId, NodeRole.WORKER);
        VMMapAuditStatus fixed = awaitAudit("the cluster is in sync again",
                status -> Conditions.isTrue(status.getConditions(), Conditions.IN_SYNC));
        assertThat(fixed.getFindings()).isEmpty();
        assertThat(fixed.getFindingCount()).isZero();
        runAudit();
        assertThat(warnings()).hasSize(3);
        assertThat(events()).filteredOn(event -> "Normal".equals(event.getType())).singleElement()
                .extracting(Event::getReason).isEqualTo(AuditPass.IN_SYNC_EVENT);
        assertThat(findingsMetric()).allSatisfy((type, value) -> assertThat(value).as(type.name()).isZero());

        // Detection only: CloudStack was only read, and no Node the test kept was touched.
        assertThat(simulator.calls()).extracting(RecordedCall::command).isNotEmpty()
                .allMatch(command -> command.startsWith("list"), "a read-only CloudStack command");
        Map<String, NodeFacts> nodesAfter = nodeFacts();
        nodesBefore.keySet().removeAll(List.of(lostWorker.getMetadata().getName()));
        assertThat(nodesAfter).containsAllEntriesOf(nodesBefore).containsKey(control.getMetadata().getName());
    }

    /**
     * The operator loses its right to list and watch Nodes mid-run (its own ServiceAccount and ClusterRole,
     * in a namespace the audit log does not watch): within one interval the audit says its view of the Nodes
     * is not current, with the API server's answer; a Node added meanwhile (drift a current view would
     * report) is not reported from the stale view; once the right is back the audit recovers by itself.
     */
    @Test
    void withItsRightToReadNodesRevokedTheAuditSaysSoFindsNothingFromTheStaleViewAndRecoversByItself() throws IOException {
        addNode(bed.addControlPlane(CLUSTER));
        addNode(bed.addWorker(CLUSTER));
        String release = "revoke";
        startOperatorAsItsOwnRelease(release);
        createAudit();
        awaitAudit("the first run finds the cluster in sync", status -> Conditions.isTrue(status.getConditions(), Conditions.IN_SYNC));

        client.rbac().clusterRoles().withName(release + "-cks-node-operator").edit(role -> {
            role.getRules().stream().filter(rule -> rule.getResources().contains("nodes")).forEach(rule -> rule.getVerbs().removeAll(List.of("list", "watch")));
            return role;
        });
        String stray = addNode(bed.addWorker(CLUSTER)).getMetadata().getName();
        Instant revoked = Instant.now();
        VMMapAuditStatus stale = Awaitility.await("the audit says its view of the Nodes is not current").atMost(Duration.ofSeconds(30).plus(RUN_TIMEOUT))
                .pollInterval(Duration.ofSeconds(1))
                .until(this::status, status -> Conditions.find(status.getConditions(), Conditions.NODES_READABLE).map(c -> "False".equals(c.getStatus())).orElse(false));
        assertThat(Duration.between(revoked, Instant.now())).as("within one interval (30 s) and its run").isLessThan(Duration.ofSeconds(30).plus(RUN_TIMEOUT));
        assertThat(Conditions.find(stale.getConditions(), Conditions.NODES_READABLE)).hasValueSatisfying(condition -> {
            assertThat(condition.getReason()).isEqualTo(AuditPass.NODES_UNAVAILABLE);
            assertThat(condition.getMessage()).contains("HTTP 403").contains("nodes");
        });
        assertThat(events()).filteredOn(event -> AuditPass.DRIFT_EVENT.equals(event.getReason()))
                .as("nothing found from the stale view").noneMatch(event -> event.getMessage().contains(stray));

        bed.operatorKubeconfig(operatorProperties, release);
        VMMapAuditStatus recovered = Awaitility.await("the audit recovers by itself and sees the stray Node").atMost(Duration.ofSeconds(30).plus(RUN_TIMEOUT).multipliedBy(2))
                .pollInterval(Duration.ofSeconds(1))
                .until(this::status, status -> Conditions.isTrue(status.getConditions(), Conditions.NODES_READABLE) && keys(status).contains("node:" + stray));
        assertThat(recovered.getFindings()).extracting(VmMapFinding::getKey).contains("node:" + stray);
    }

    /**
     * Shape: the bed's cluster, admin-like keys. Other actor: whoever manages the operator's RBAC (a chart
     * upgrade that replaces the ClusterRole, an admin tightening it) takes the right to write the audit's status
     * away for 40 s while a run is due. The API server refuses the write at once (HTTP 403, which the client
     * does not retry), so JOSDK's default retry gave up after 5 attempts (about 16 s) and the audit fell silent
     * until the 10-hour maximum reconciliation interval. The run is retried until it lands: within a minute of
     * the right coming back.
     */
    @Test
    void aRunWhoseStatusWriteIsRefusedForAWhileLandsWithinAMinuteOfTheRightComingBack() throws IOException, InterruptedException {
        addNode(bed.addControlPlane(CLUSTER));
        addNode(bed.addWorker(CLUSTER));
        String release = "refuse";
        startOperatorAsItsOwnRelease(release);
        createAudit();
        awaitAudit("the first run finds the cluster in sync", status -> Conditions.isTrue(status.getConditions(), Conditions.IN_SYNC));

        client.rbac().clusterRoles().withName(release + "-cks-node-operator").edit(role -> {
            role.getRules().forEach(rule -> rule.getResources().remove("vmmapaudits/status"));
            return role;
        });
        long refusedRun = changeSpec();
        Thread.sleep(Duration.ofSeconds(40).toMillis());
        assertThat(status().getObservedGeneration()).as("the run's status was refused meanwhile").isLessThan(refusedRun);

        bed.operatorKubeconfig(operatorProperties, release);
        Instant allowed = Instant.now();
        Awaitility.await("the run's status lands within a minute of the right coming back").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1)).until(() -> status().getObservedGeneration() >= refusedRun);
        System.out.printf("REFUSED status writes for 40 s: the audit's run landed %d s after the right came back%n",
                Duration.between(allowed, Instant.now()).toSeconds());
        assertThat(Conditions.isTrue(status().getConditions(), Conditions.IN_SYNC)).isTrue();
    }

    /**
     * The operator as a Helm release of its own (its own ServiceAccount and ClusterRole, in namespace
     * cks-<release>-it, which the audit log does not watch), so a test may change its RBAC without touching
     * the other operators'.
     */
    private void startOperatorAsItsOwnRelease(String release) throws IOException {
        cloudStack = CloudStackFixture.forNodes(bed, CLUSTER, "CloudManaged", client.nodes().list().getItems());
        String namespace = "cks-" + release + "-it";
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
                .serverSideApply();
        operatorProperties = new LinkedHashMap<>(cloudStack.operatorProperties());
        operatorProperties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
        operatorProperties.put("cks.namespace", namespace);
        operator = OperatorProcess.start(bed, bed.operatorKubeconfig(operatorProperties, release), "vmmapaudit-" + release, operatorProperties);
    }

    private Node addNode(Node node) {
        nodesOfThisTest.add(node.getMetadata().getName());
        return node;
    }

    private void deleteNode(String name) {
        client.nodes().withName(name).delete();
        client.nodes().withName(name).waitUntilCondition(Objects::isNull, 60, TimeUnit.SECONDS);
    }

    private void createAudit() {
        client.resource(audit(AUDIT, cloudStack.cluster().id())).create();
    }

    /** An audit of the cluster every 30 s (the schema's least), counting every difference at once (grace 0). */
    static VMMapAudit audit(String name, String clusterId) {
        VMMapAudit audit = new VMMapAudit();
        audit.setMetadata(new ObjectMetaBuilder().withName(name).build());
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId(clusterId);
        spec.setIntervalSeconds(30);
        spec.setGracePeriodSeconds(0);
        audit.setSpec(spec);
        return audit;
    }

    private Resource<VMMapAudit> audit() {
        return client.resources(VMMapAudit.class).withName(AUDIT);
    }

    private VMMapAuditStatus status() {
        VMMapAuditStatus status = audit().get().getStatus();
        return status == null ? new VMMapAuditStatus() : status;
    }

    /**
     * One more audit run, now. The schema keeps spec.intervalSeconds at 30 or more, but the reconciler
     * also runs whenever the spec changes; flipping the interval between 30 and 31 seconds is such a
     * change and alters nothing else.
     */
    private VMMapAuditStatus runAudit() {
        return awaitRun(changeSpec());
    }

    /** Changes the spec (see {@link #runAudit()}); returns the new generation. */
    private long changeSpec() {
        return audit().edit(audit -> {
            audit.getSpec().setIntervalSeconds(audit.getSpec().getIntervalSeconds() == 30 ? 31 : 30);
            return audit;
        }).getMetadata().getGeneration();
    }

    /** The run for this generation is over when its status reports the generation. */
    private VMMapAuditStatus awaitRun(long generation) {
        return Awaitility.await("the audit run for generation " + generation).atMost(RUN_TIMEOUT)
                .pollInterval(Duration.ofMillis(200))
                .until(this::status, status -> status.getObservedGeneration() != null && status.getObservedGeneration() >= generation);
    }

    /** Runs the audit until its status shows what the step expects (the Node cache may lag a run behind). */
    private VMMapAuditStatus awaitAudit(String what, Predicate<VMMapAuditStatus> expected) {
        Instant deadline = Instant.now().plus(RUN_TIMEOUT);
        while (true) {
            VMMapAuditStatus status = runAudit();
            assertThat(status.getPhase()).as("%s: %s (%s)", what, status.getMessage(),
                    status.getLastRun() == null ? null : status.getLastRun().getNote()).isNotEqualTo(VMMapAuditStatus.Phase.Error);
            if (expected.test(status)) {
                return status;
            }
            assertThat(Instant.now()).as("%s within %s; the last run's status: phase %s, findings %s, message %s", what, RUN_TIMEOUT,
                    status.getPhase(), keys(status), status.getMessage()).isBefore(deadline);
        }
    }

    private void awaitRunByInterval() {
        String lastStart = status().getLastRun().getStartedAt();
        long generation = audit().get().getMetadata().getGeneration();
        Awaitility.await("a run started by the interval alone").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1))
                .until(() -> status().getLastRun().getStartedAt(), start -> !start.equals(lastStart));
        assertThat(audit().get().getMetadata().getGeneration()).isEqualTo(generation);
    }

    private static List<String> keys(VMMapAuditStatus status) {
        return status.getFindings().stream().map(VmMapFinding::getKey).toList();
    }

    private List<Event> events() {
        return client.v1().events().inNamespace(EventRecorder.NAMESPACE).withField("involvedObject.name", AUDIT).list().getItems();
    }

    private List<Event> warnings() {
        List<Event> warnings = events().stream().filter(event -> "Warning".equals(event.getType())).toList();
        assertThat(warnings).extracting(Event::getReason).containsOnly(AuditPass.DRIFT_EVENT);
        return warnings;
    }

    /** {@code cks_vmmap_findings} of this audit, as the running operator exports it on /q/metrics. */
    private Map<Type, Double> findingsMetric() throws IOException {
        Map<Type, Double> byType = new HashMap<>();
        for (Map<String, String> sample : samples("cks_vmmap_findings")) {
            byType.put(Type.valueOf(sample.get("type")), Double.parseDouble(sample.get("value")));
        }
        return byType;
    }

    /** JOSDK's {@code reconciliations_started_total} of one controller. */
    private double reconcilesStarted(String controller) throws IOException {
        return operator.httpGet("/q/metrics").lines().map(line -> METRIC_LINE.matcher(line.strip())).filter(Matcher::matches)
                .filter(m -> m.group(1).equals("reconciliations_started_total") && m.group(2).contains("controller_name=\"" + controller + "\""))
                .mapToDouble(m -> Double.parseDouble(m.group(3))).sum();
    }

    /**
     * Where docs/metrics.md's "Framework" table and /q/metrics differ: a listed metric missing or with other
     * labels, or one of the operator SDK's on the page that the table lacks. A counter the table says
     * appears only after a failed or retried reconcile need only be one the operator SDK defines.
     */
    private Map<String, String> frameworkMetricsNotAsDocumented() throws IOException {
        Map<String, Set<String>> documented = MetricsDocTest.frameworkMetrics();
        assertThat(documented).as("docs/metrics.md's Framework table").containsKey("reconciliations_started_total");
        Map<String, Set<String>> onPage = new TreeMap<>();
        for (String line : operator.httpGet("/q/metrics").lines().toList()) {
            Matcher sample = FRAMEWORK_SAMPLE.matcher(line);
            if (sample.find()) {
                Set<String> labels = new TreeSet<>();
                Matcher label = LABEL.matcher(sample.group(3) == null ? "" : sample.group(3));
                while (label.find()) {
                    labels.add(label.group(1));
                }
                labels.removeAll(Set.of("le", "quantile"));
                onPage.computeIfAbsent(sample.group(1), m -> new TreeSet<>()).addAll(labels);
            }
        }
        Set<String> definedButLazy = Set.of(MicrometerMetricsV2.RECONCILIATIONS_FAILED, MicrometerMetricsV2.RECONCILIATIONS_RETRIES_NUMBER).stream()
                .map(name -> name.replace('.', '_')).collect(Collectors.toSet());
        Map<String, String> differences = new TreeMap<>();
        for (Map.Entry<String, Set<String>> metric : documented.entrySet()) {
            if (onPage.containsKey(metric.getKey())) {
                if (!onPage.get(metric.getKey()).equals(metric.getValue())) {
                    differences.put(metric.getKey(), "labels on /q/metrics: " + onPage.get(metric.getKey()) + ", in the doc: " + metric.getValue());
                }
            } else if (!MetricsDocTest.appearsAfterTheFirst(metric.getKey())) {
                differences.put(metric.getKey(), "not on /q/metrics (the operator SDK's there: " + onPage.keySet() + ")");
            } else if (!definedButLazy.contains(metric.getKey())) {
                differences.put(metric.getKey(), "not a metric the operator SDK defines");
            }
        }
        onPage.keySet().stream().filter(metric -> !documented.containsKey(metric)).forEach(metric -> differences.put(metric, "on /q/metrics, not in the doc"));
        return differences;
    }

    private double metric(String name, String label, String value) throws IOException {
        return samples(name).stream().filter(sample -> value.equals(sample.get(label)))
                .mapToDouble(sample -> Double.parseDouble(sample.get("value"))).sum();
    }

    /** Samples of one metric of this audit: their labels, and the value under "value". */
    private List<Map<String, String>> samples(String name) throws IOException {
        List<Map<String, String>> samples = new ArrayList<>();
        for (String line : operator.httpGet("/q/metrics").split("\n")) {
            Matcher matcher = METRIC_LINE.matcher(line.strip());
            if (!matcher.matches() || !matcher.group(1).equals(name)) {
                continue;
            }
            Map<String, String> sample = new HashMap<>();
            Matcher labels = LABEL.matcher(matcher.group(2));
            while (labels.find()) {
                sample.put(labels.group(1), labels.group(2));
            }
            if (AUDIT.equals(sample.get("audit"))) {
                sample.put("value", matcher.group(3));
                samples.add(sample);
            }
        }
        return samples;
    }

    /** What the operator would change on a Node if it acted: schedulability, taints, and its own labels and annotations. */
    private record NodeFacts(Boolean unschedulable, String taints, Map<String, String> operatorMarks) {
    }

    private Map<String, NodeFacts> nodeFacts() {
        Map<String, NodeFacts> facts = new HashMap<>();
        for (Node node : client.nodes().list().getItems()) {
            Map<String, String> marks = new HashMap<>();
            Objects.requireNonNullElse(node.getMetadata().getLabels(), Map.<String, String>of()).forEach((key, value) -> {
                if (key.startsWith("nodeops.cks.dev/")) {
                    marks.put("label " + key, value);
                }
            });
            Objects.requireNonNullElse(node.getMetadata().getAnnotations(), Map.<String, String>of()).forEach((key, value) -> {
                if (key.startsWith("nodeops.cks.dev/")) {
                    marks.put("annotation " + key, value);
                }
            });
            // Taints under node.kubernetes.io/ belong to the node lifecycle controller (not-ready on a new
            // node, for one), which changes them on its own; the ones anybody else sets are compared.
            List<String> taints = Objects.requireNonNullElse(node.getSpec().getTaints(), List.<io.fabric8.kubernetes.api.model.Taint>of()).stream()
                    .filter(t -> !t.getKey().startsWith("node.kubernetes.io/"))
                    .map(t -> t.getKey() + ":" + t.getEffect()).sorted().toList();
            facts.put(node.getMetadata().getName(), new NodeFacts(node.getSpec().getUnschedulable(), String.join(",", taints), marks));
        }
        return facts;
    }
}
