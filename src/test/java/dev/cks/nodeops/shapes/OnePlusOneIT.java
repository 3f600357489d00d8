package dev.cks.nodeops.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.drain.Preflight;
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
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * CKS's default cluster shape, 1 control-plane node + 1 worker, upgraded by the operator that runs on those two
 * nodes: each drain evicts the operator's own pods, the leader's included.
 *
 * <p>The shape ({@link ShapeBed}): a KWOK control-plane node with kubeadm's {@code node-role.kubernetes.io/control-plane}
 * label and {@code NoSchedule} taint, and one KWOK worker, both at v1.34.2, in CloudStack (the simulator) as the
 * cluster's two VMs. The actors: the chart, installed by Helm with its defaults but for {@code replicaCount} and a
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
    static final String FROM = "v1.34.2";
    static final String TARGET = "v1.35.9";

    /**
     * The chart's defaults: 2 replicas, one per node (the scheduler's choice, checked), and its PDB
     * {@code maxUnavailable: 1}. The leader's pod is on the control-plane node, upgraded first: its drain evicts the
     * leader, whose process stops and gives its Lease up; the standby on the worker leads, finishes that node and
     * drains the worker, where by then both pods run (the replacement could go nowhere else): the standby's pod
     * goes first, the leader's once the PDB allows (its replacement Ready on the control-plane node). Preflight
     * (Fail) predicts nothing from the operator's own pods: each node loses one pod of the two, which the budget allows.
     */
    @Test
    void theLeaderDrainsItsOwnNodeHandsOverAndTheNewLeaderFinishesBothNodes(TestBed bed) throws Exception {
        try (ShapeBed shape = new ShapeBed(bed, "sh2", 1, 2, FROM)) {
            String worker = shape.workers.get(0);
            assertThat(shape.placement()).as("the scheduler put one replica on each node (toleration, anti-affinity)")
                    .containsExactlyInAnyOrder(shape.control, worker);
            assertThat(shape.client.policy().v1().podDisruptionBudget().inNamespace(shape.namespace).withName(shape.fullname).get()
                    .getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
            String first = shape.leaderOn(shape.control);

            NodeUpgrade done = shape.run(upgrade("shape-1p1-two", shape), OnePlusOneIT::ended);

            assertUpgradedAndReleased(shape, done);
            List<String> holders = shape.pods.holders();
            assertThat(holders.get(0)).isEqualTo(first);
            String workerLeader = holders.get(1);
            assertThat(shape.pods.nodeOf(workerLeader)).as("the standby on the worker took over").isEqualTo(worker);
            assertThat(shape.pods.nodeOf(holders.get(holders.size() - 1))).as("a pod on the control-plane node leads at the end")
                    .isEqualTo(shape.control);
            List<String> deleted = shape.pods.deleted();
            assertThat(deleted).filteredOn(pod -> worker.equals(shape.pods.nodeOf(pod)))
                    .as("on the worker, the standby's pod went first, the leader's last").hasSize(2).last().isEqualTo(workerLeader);
            // One handover per node. Beside those, only a replica already evicted may show: the bed removes a pod
            // before its process has ended (a kubelet keeps it Terminating), so the leader may let go while the
            // standby's process is still stopping, and that process can take the Lease for the seconds its stop takes.
            assertThat(holders.subList(2, holders.size())).as("after the worker's leader, pods of the control-plane node, or a replica "
                    + "evicted before it").allMatch(holder -> shape.control.equals(shape.pods.nodeOf(holder))
                            || deleted.indexOf(holder) >= 0 && deleted.indexOf(holder) < deleted.indexOf(workerLeader));
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
        try (ShapeBed shape = new ShapeBed(bed, "sh1", 1, 1, FROM)) {
            assertThat(shape.client.policy().v1().podDisruptionBudget().inNamespace(shape.namespace).list().getItems()).as("no PDB for one replica")
                    .isEmpty();
            String first = shape.leaderOn(shape.placement().get(0));

            NodeUpgrade done = shape.run(upgrade("shape-1p1-one", shape), OnePlusOneIT::ended);

            assertUpgradedAndReleased(shape, done);
            List<String> holders = shape.pods.holders();
            assertThat(holders.get(0)).isEqualTo(first);
            assertThat(holders).as("each pod that led evicted itself: its replacement leads").hasSize(shape.pods.runs().size());
            assertThat(shape.pods.nodeOf(holders.get(holders.size() - 1))).as("the last leader runs on the node drained first")
                    .isEqualTo(shape.control);
            shape.assertHandoversClean();
        }
    }

    private static boolean ended(NodeUpgrade upgrade) {
        return upgrade.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded || upgrade.getStatus().getPhase() == NodeUpgradeStatus.Phase.Failed;
    }

    /** Both nodes to the target with the chart's script, preflight Fail. */
    private static NodeUpgrade upgrade(String name, ShapeBed shape) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName(name);
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setSelector(new LabelSelector(null, Map.of(ShapeBed.LABEL, shape.name)));
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.Script);
        UpgradeExecutor.Script script = new UpgradeExecutor.Script();
        UpgradeExecutor.ConfigMapKeyRef ref = new UpgradeExecutor.ConfigMapKeyRef();
        ref.setName(shape.fullname + "-upgrade-scripts");
        ref.setKey("kubeadm");
        script.setConfigMapRef(ref);
        executor.setScript(script);
        spec.setExecutor(executor);
        spec.setPreflight(Preflight.Fail);
        spec.setReadyTimeoutSeconds(60);
        spec.setTimeoutSeconds(900);
        spec.getDrain().setTimeoutSeconds(180);
        upgrade.setSpec(spec);
        return upgrade;
    }

    /**
     * Succeeded, the control-plane node first (Apply) then the worker (Node), one Job each; both at the target,
     * schedulable, nothing of ours left on them; and preflight predicted nothing from the operator's own pods.
     */
    private static void assertUpgradedAndReleased(ShapeBed shape, NodeUpgrade done) {
        String worker = shape.workers.get(0);
        assertThat(done.getStatus().getPhase()).as(shape.diagnosis(done)).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(done.getStatus().getNodes()).extracting(UpgradeNodeStatus::getName).containsExactly(shape.control, worker);
        assertThat(done.getStatus().getNodes()).allSatisfy(n -> {
            assertThat(n.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Succeeded);
            assertThat(n.getVersion()).isEqualTo(TARGET);
        });
        assertThat(shape.kubelets.jobsOn(shape.nodes())).as("exactly one upgrade Job per node")
                .extracting(SeenJob::node, SeenJob::action).containsExactly(tuple(shape.control, "Apply"), tuple(worker, "Node"));
        for (String node : shape.nodes()) {
            shape.assertReleased(node);
            assertThat(shape.client.nodes().withName(node).get().getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(TARGET);
        }
        ShapeBed.assertPreflightFoundNothing(done.getStatus().getConditions());
        assertThat(Conditions.isTrue(done.getStatus().getConditions(), Conditions.SUCCEEDED)).isTrue();
    }
}
