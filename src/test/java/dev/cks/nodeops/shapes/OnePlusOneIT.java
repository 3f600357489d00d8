package dev.cks.nodeops.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.LeaderElection;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob;
import dev.cks.nodeops.testbed.OperatorPods;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeSpec;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeExecutor;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * CKS's default cluster shape, 1 control-plane node + 1 worker, upgraded by the operator that runs on those two
 * nodes: each drain evicts the operator's own pods, the leader's included.
 *
 * <p>The shape: a KWOK control-plane node with kubeadm's {@code node-role.kubernetes.io/control-plane} label and
 * {@code NoSchedule} taint, and one KWOK worker, both at v1.34.2, in CloudStack (the simulator) as the cluster's
 * two VMs. The actors: the chart, installed by Helm with its defaults but for {@code replicaCount} and a
 * {@code nodeSelector} that keeps its pods on these two nodes of the shared bed; the real kube-scheduler, which
 * places the chart's pods (toleration of the control-plane taint, preferred anti-affinity) and their
 * replacements; the real ReplicaSet and disruption controllers, which recreate evicted pods and count the
 * chart's PodDisruptionBudget; {@link OperatorPods}, the kubelet of the operator's pods (a process per bound
 * pod with the pod's environment as the chart rendered it, SIGTERM when the pod is deleted: an operator
 * evicting its own pod stops itself); {@link KubeletUpgradeSimulation}, the node's side of an upgrade Job.
 * Operator pods cannot run on KWOK nodes (KWOK runs no container), hence the processes: the closest honest
 * arrangement, whose differences from a kubelet {@link OperatorPods} names.
 */
@ExtendWith(TestBedExtension.class)
class OnePlusOneIT {
    static final String CHART = "deploy/helm/cks-node-operator";
    static final String FROM = "v1.34.2";
    static final String TARGET = "v1.35.9";
    private static final String SHAPE_LABEL = "shape-it.nodeops.cks.dev/cluster";
    private static final String SCRIPT = "#!/bin/sh\n# $1: target version, $2: apply|node\nset -eu\n"
            + "if [ \"$2\" = apply ]; then kubeadm upgrade apply \"$1\" --yes; else kubeadm upgrade node; fi\nsystemctl restart kubelet\n";
    private static final Duration UPGRADE_TIME = Duration.ofMinutes(6);

    /**
     * The chart's defaults: 2 replicas, one per node (the scheduler's choice, checked), and its PDB
     * {@code maxUnavailable: 1}. The leader's pod is on the control-plane node, upgraded first: its drain evicts the
     * leader, whose process stops and gives its Lease up; the standby on the worker leads, finishes that node and
     * drains the worker, where by then both pods run (the replacement could go nowhere else): the PDB lets one go,
     * the other once its replacement is Ready on the control-plane node. Preflight (Fail) predicts nothing from the
     * operator's own pods: each node loses one pod of the two, which the budget allows.
     */
    @Test
    void theLeaderDrainsItsOwnNodeHandsOverAndTheNewLeaderFinishesBothNodes(TestBed bed) throws Exception {
        try (Shape shape = new Shape(bed, "sh2", 2)) {
            assertThat(shape.placement()).as("the scheduler put one replica on each node (toleration, anti-affinity)")
                    .containsExactlyInAnyOrder(shape.control, shape.worker);
            assertThat(shape.client.policy().v1().podDisruptionBudget().inNamespace(shape.namespace).withName(shape.fullname).get()
                    .getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
            String first = shape.pods.startOn(shape.control);
            Awaitility.await("the pod on the control-plane node leads").atMost(Duration.ofSeconds(90)).until(() -> first.equals(shape.holder()));
            shape.pods.follow();

            NodeUpgrade done = shape.upgrade("shape-1p1-two");

            shape.assertUpgradedAndReleased(done);
            List<String> holders = shape.pods.holders();
            assertThat(holders.get(0)).isEqualTo(first);
            assertThat(holders).as("one handover per node: from the control-plane node's pod to the worker's, then to a pod on the "
                    + "control-plane node").hasSize(3);
            assertThat(shape.pods.nodeOf(holders.get(1))).isEqualTo(shape.worker);
            assertThat(shape.pods.nodeOf(holders.get(2))).isEqualTo(shape.control);
            assertThat(shape.pods.deleted()).filteredOn(pod -> shape.worker.equals(shape.pods.nodeOf(pod)))
                    .as("on the worker, the standby's pod went first, the leader's last").hasSize(2).last().isEqualTo(holders.get(1));
            assertThat(shape.placement()).as("both replicas ended on the control-plane node, the worker was drained last")
                    .containsExactly(shape.control, shape.control);
            assertThat(shape.pods.fewestHealthy()).as("the chart's PDB kept one replica Ready throughout").isGreaterThanOrEqualTo(1);
            shape.assertHandoversClean();
        }
    }

    /**
     * {@code replicaCount: 1}: the chart makes no PDB, so nothing but the scheduler's room stands between the drain
     * and the one pod. Its leader evicts itself wherever the scheduler put it; the replacement, on the other node,
     * starts, takes the Lease its predecessor gave up and finishes. Preflight (Fail) predicts no block.
     */
    @Test
    void aSingleReplicaEvictsItselfAndItsReplacementFinishesTheUpgrade(TestBed bed) throws Exception {
        try (Shape shape = new Shape(bed, "sh1", 1)) {
            assertThat(shape.client.policy().v1().podDisruptionBudget().inNamespace(shape.namespace).list().getItems()).as("no PDB for one replica")
                    .isEmpty();
            String first = shape.pods.startOn(shape.placement().get(0));
            Awaitility.await("the only pod leads").atMost(Duration.ofSeconds(90)).until(() -> first.equals(shape.holder()));
            shape.pods.follow();

            NodeUpgrade done = shape.upgrade("shape-1p1-one");

            shape.assertUpgradedAndReleased(done);
            List<String> holders = shape.pods.holders();
            assertThat(holders.get(0)).isEqualTo(first);
            assertThat(holders).as("each pod that led evicted itself: its replacement leads").hasSize(shape.pods.runs().size());
            assertThat(shape.pods.nodeOf(holders.get(holders.size() - 1))).as("the last leader runs on the node drained first")
                    .isEqualTo(shape.control);
            shape.assertHandoversClean();
        }
    }

    /** One test's 1+1 cluster on the shared bed, its chart release and its operator pods; removed on close. */
    private static final class Shape implements AutoCloseable {
        final TestBed bed;
        final KubernetesClient client;
        final String control;
        final String worker;
        final String namespace;
        final String release;
        final String fullname;
        final CloudStackFixture cloudStack;
        final KubeletUpgradeSimulation kubelets;
        final OperatorPods pods;
        private final List<String> upgrades = new ArrayList<>();

        Shape(TestBed bed, String name, int replicas) throws Exception {
            this.bed = bed;
            this.client = bed.client();
            this.control = bed.addNode(name, true, FROM).getMetadata().getName();
            this.worker = bed.addNode(name, false, FROM).getMetadata().getName();
            for (String node : List.of(control, worker)) {
                client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                        "{\"metadata\":{\"labels\":{\"" + SHAPE_LABEL + "\":\"" + name + "\"}}}");
            }
            this.cloudStack = CloudStackFixture.forNodes(bed, name, "CloudManaged", List.of(client.nodes().withName(control).get(),
                    client.nodes().withName(worker).get()));
            this.namespace = bed.newNamespace(name);
            this.release = name;
            this.fullname = release + "-cks-node-operator";
            Path script = bed.projectRoot().resolve("target/" + name + "-upgrade.sh");
            Files.writeString(script, SCRIPT);
            TestBed.recordGrantedSecret(CloudStackFixture.SECRET_NAMESPACE, cloudStack.operatorProperties().get("cks.cloudstack.secret-name"));
            bed.tool("helm", "install", release, CHART, "-n", namespace, "--set", "replicaCount=" + replicas,
                    "--set", "nodeSelector." + SHAPE_LABEL.replace(".", "\\.") + "=" + name,
                    "--set", "cloudstack.secretName=" + cloudStack.operatorProperties().get("cks.cloudstack.secret-name"),
                    "--set-file", "upgrade.scripts.kubeadm=" + script, "--wait", "--timeout", "2m");
            this.kubelets = new KubeletUpgradeSimulation(client, namespace);
            this.pods = new OperatorPods(bed, namespace, Map.of("app.kubernetes.io/name", "cks-node-operator", "app.kubernetes.io/instance", release));
        }

        /** The nodes of the release's pods that are not being deleted. */
        List<String> placement() {
            return client.pods().inNamespace(namespace).withLabel("app.kubernetes.io/instance", release).list().getItems().stream()
                    .filter(p -> p.getMetadata().getDeletionTimestamp() == null).map(p -> p.getSpec().getNodeName()).toList();
        }

        String holder() {
            var lease = client.leases().inNamespace(namespace).withName("cks-node-operator-leader").get();
            return lease == null ? null : lease.getSpec().getHolderIdentity();
        }

        /** A NodeUpgrade of both nodes with the chart's script and preflight Fail, awaited to its end. */
        NodeUpgrade upgrade(String name) {
            NodeUpgrade upgrade = new NodeUpgrade();
            upgrade.getMetadata().setName(name);
            NodeUpgradeSpec spec = new NodeUpgradeSpec();
            spec.setTargetVersion(TARGET);
            spec.setNodeSelector(Map.of(SHAPE_LABEL, release));
            UpgradeExecutor executor = new UpgradeExecutor();
            executor.setType(UpgradeExecutor.Type.Script);
            UpgradeExecutor.Script script = new UpgradeExecutor.Script();
            UpgradeExecutor.ConfigMapKeyRef ref = new UpgradeExecutor.ConfigMapKeyRef();
            ref.setName(fullname + "-upgrade-scripts");
            ref.setKey("kubeadm");
            script.setConfigMapRef(ref);
            executor.setScript(script);
            spec.setExecutor(executor);
            spec.setPreflight(Preflight.Fail);
            spec.setReadyTimeoutSeconds(60);
            spec.setTimeoutSeconds(900);
            spec.getDrain().setTimeoutSeconds(180);
            upgrade.setSpec(spec);
            upgrades.add(name);
            client.resource(upgrade).create();
            return await(name, u -> u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded
                    || u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Failed);
        }

        private NodeUpgrade await(String name, Predicate<NodeUpgrade> condition) {
            try {
                Awaitility.await("NodeUpgrade " + name).atMost(UPGRADE_TIME).pollInterval(Duration.ofSeconds(1)).until(() -> {
                    NodeUpgrade upgrade = client.resources(NodeUpgrade.class).withName(name).get();
                    return upgrade != null && upgrade.getStatus() != null && condition.test(upgrade);
                });
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("NodeUpgrade " + name + " did not end within " + UPGRADE_TIME + ": " + diagnosis(name), e);
            }
            return client.resources(NodeUpgrade.class).withName(name).get();
        }

        private String diagnosis(String name) {
            NodeUpgrade upgrade = client.resources(NodeUpgrade.class).withName(name).get();
            NodeUpgradeStatus status = upgrade == null ? null : upgrade.getStatus();
            return (status == null ? "(no status)" : "phase " + status.getPhase() + ", nodes " + status.getNodes().stream()
                    .map(n -> n.getName() + " " + n.getPhase() + " " + n.getDrain()).toList() + ", conditions " + status.getConditions())
                    + "\n" + pods.describe()
                    + "\nevents:\n" + String.join("\n", bed.eventsOf(name).stream().map(e -> e.getType() + " " + e.getReason() + ": " + e.getMessage()).toList());
        }

        /**
         * Succeeded, the control-plane node first (Apply) then the worker (Node), one Job each; both at the target,
         * schedulable, nothing of ours left on them; and preflight predicted nothing from the operator's own pods.
         */
        void assertUpgradedAndReleased(NodeUpgrade done) {
            assertThat(done.getStatus().getPhase()).as(diagnosis(done.getMetadata().getName())).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
            assertThat(done.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName).containsExactly(control, worker);
            assertThat(done.getStatus().getNodes()).allSatisfy(n -> {
                assertThat(n.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Succeeded);
                assertThat(n.getVersion()).isEqualTo(TARGET);
            });
            assertThat(kubelets.jobsOn(List.of(control, worker))).as("exactly one upgrade Job per node")
                    .extracting(SeenJob::node, SeenJob::action)
                    .containsExactly(tuple(control, "Apply"), tuple(worker, "Node"));
            for (String name : List.of(control, worker)) {
                Node node = client.nodes().withName(name).get();
                assertThat(node.getSpec().getUnschedulable()).as("%s left cordoned", name).isNotEqualTo(Boolean.TRUE);
                assertThat(node.getMetadata().getAnnotations()).as("node %s", name).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY);
                assertThat(node.getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(TARGET);
            }
            assertThat(done.getStatus().getConditions()).filteredOn(c -> c.getType().equals(PreflightGate.CONDITION)).singleElement()
                    .satisfies(c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getMessage()).as("what preflight said about the operator's own pods")
                                .isEqualTo("Preflight found nothing that would block the drain.");
                    });
            assertThat(Conditions.isTrue(done.getStatus().getConditions(), Conditions.SUCCEEDED)).isTrue();
        }

        /**
         * Every leader that evicted itself stopped as a stopped pod does (SIGTERM, not a halt for a lost Lease) and
         * gave its Lease up; no process ever lost it.
         */
        void assertHandoversClean() throws Exception {
            pods.awaitSettled(Duration.ofSeconds(90));
            System.out.println("[1+1] " + pods.describe());
            List<String> holders = pods.holders();
            for (OperatorPods.Run run : pods.runs()) {
                String output = run.process().output();
                assertThat(output).as("%s never lost the Lease", run.pod()).doesNotContain("Lost the leader Lease");
                if (run.stopped() != null) {
                    assertThat(run.exitStatus()).as("%s stopped by its SIGTERM: neither halted for a lost Lease nor killed after its grace period",
                            run.pod()).isNotIn(LeaderElection.LOST_LEASE_EXIT_STATUS, 137);
                    if (holders.contains(run.pod())) {
                        assertThat(output).as("%s, a leader evicted, handed over", run.pod()).contains("Gave the leader Lease up on shutdown.");
                    }
                }
            }
        }

        @Override
        public void close() {
            try {
                for (String name : upgrades) {
                    client.resources(NodeUpgrade.class).withName(name).delete();
                }
                Awaitility.await("this test's NodeUpgrades deleted (the operator removes their finalizers)").atMost(Duration.ofSeconds(60))
                        .until(() -> upgrades.stream().allMatch(n -> client.resources(NodeUpgrade.class).withName(n).get() == null));
            } finally {
                pods.close();
                kubelets.close();
                bed.runTool("helm", "uninstall", release, "-n", namespace, "--wait");
                client.namespaces().withName(namespace).delete();
                cloudStack.close();
                client.nodes().withName(control).delete();
                client.nodes().withName(worker).delete();
            }
        }
    }
}
