package dev.cks.nodeops.shapes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob;
import dev.cks.nodeops.testbed.OperatorPods;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;

/**
 * An HA CKS cluster, 3 control-plane nodes + 2 workers, upgraded and then shrunk by the operator that runs on those
 * nodes.
 *
 * <p>The shape ({@link ShapeBed}): three KWOK control-plane nodes with kubeadm's label and {@code NoSchedule} taint
 * (made one after the other, as CKS makes an HA control plane) and two KWOK workers, at v1.34.2, the cluster's five
 * VMs in the CloudStack simulator. The actors: the chart (Helm, its defaults: 2 replicas, preferred anti-affinity,
 * its PDB {@code maxUnavailable: 1}); the real scheduler, ReplicaSet and disruption controllers, which place,
 * recreate and count the operator's pods as nodes are drained; {@link OperatorPods}, the kubelet of those pods (a
 * process per pod, SIGTERM when it is deleted); the node's side of each upgrade Job; the CloudStack simulator,
 * which takes the scale.
 */
@ExtendWith(TestBedExtension.class)
class ThreePlusTwoIT {
    /**
     * The NodeUpgrade runs {@code kubeadm upgrade apply} on the first control-plane node alone, then {@code upgrade
     * node} on the other two control-plane nodes, then on the workers, one Job per node; every drain that reaches an
     * operator pod evicts it (the leader's last on its node), the PDB keeps one replica Ready, and each evicted
     * leader hands over cleanly. Then a ScaleDown removes a worker that runs a replica (the leader's if one does),
     * with one scale. Preflight (Fail) predicts no block from the operator's own pods in either.
     */
    @Test
    void anHaClusterIsUpgradedControlPlaneFirstThenAWorkerHoldingAReplicaIsRemoved(TestBed bed) throws Exception {
        try (ShapeBed shape = new ShapeBed(bed, "sh5", 3, 2, 2, OnePlusOneIT.FROM)) {
            List<String> placement = shape.placement();
            assertThat(placement).as("the scheduler spread the replicas (anti-affinity)").hasSize(2).doesNotHaveDuplicates();
            String first = shape.leaderOn(placement.get(0));

            NodeUpgrade upgraded = shape.run(shape.scriptUpgrade("shape-3p2-all", OnePlusOneIT.TARGET), u ->
                    u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded || u.getStatus().getPhase() == NodeUpgradeStatus.Phase.Failed);

            assertThat(upgraded.getStatus().getPhase()).as(shape.diagnosis(upgraded)).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
            List<String> planned = upgraded.getStatus().getNodes().stream().map(UpgradeNodeStatus::getName).toList();
            assertThat(planned.subList(0, 3)).as("the control plane first, the first control-plane node first").isEqualTo(shape.controls);
            assertThat(planned.subList(3, 5)).containsExactlyInAnyOrderElementsOf(shape.workers);
            assertThat(shape.kubelets.jobsOn(shape.nodes())).as("one Job per node in the planned order: apply once, on the first")
                    .extracting(SeenJob::node, SeenJob::action).containsExactly(
                            tuple(planned.get(0), "Apply"), tuple(planned.get(1), "Node"),
                            tuple(planned.get(2), "Node"), tuple(planned.get(3), "Node"),
                            tuple(planned.get(4), "Node"));
            for (String node : shape.nodes()) {
                shape.assertReleased(node);
                assertThat(shape.client.nodes().withName(node).get().getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(OnePlusOneIT.TARGET);
            }
            ShapeBed.assertPreflightFoundNothing(upgraded.getStatus().getConditions());
            assertThat(Conditions.isTrue(upgraded.getStatus().getConditions(), Conditions.SUCCEEDED)).isTrue();
            assertThat(shape.pods.holders()).as("the first leader led first").first().isEqualTo(first);
            shape.assertHandoversClean();

            List<String> onWorkers = shape.placement().stream().filter(shape.workers::contains).toList();
            String leaderNode = shape.pods.nodeOf(shape.holder());
            String victim = shape.workers.contains(leaderNode) ? leaderNode : onWorkers.isEmpty() ? shape.workers.get(0) : onWorkers.get(0);
            ScaleDown removed = shape.run(ShapeBed.scaleDown("shape-3p2-remove", victim), s -> s.getStatus().getPhase() == ScaleDownStatus.Phase.Succeeded
                    || s.getStatus().getPhase() == ScaleDownStatus.Phase.Failed || s.getStatus().getPhase() == ScaleDownStatus.Phase.RolledBack);

            assertThat(removed.getStatus().getPhase()).as(shape.diagnosis(removed)).isEqualTo(ScaleDownStatus.Phase.Succeeded);
            assertThat(shape.cloudStack.simulator().calls("scaleKubernetesCluster")).as("one scale").hasSize(1);
            assertThat(shape.cloudStack.simulator().cluster(shape.cloudStack.cluster().id()).vmIds()).doesNotContain(shape.cloudStack.vmId(victim));
            assertThat(shape.client.nodes().withName(victim).get()).as("its Node deleted").isNull();
            shape.nodes().stream().filter(node -> !node.equals(victim)).forEach(shape::assertReleased);
            ShapeBed.assertPreflightFoundNothing(removed.getStatus().getConditions());
            assertThat(shape.placement()).hasSize(2).doesNotContain(victim);
            assertThat(shape.pods.fewestHealthy()).as("the chart's PDB kept one replica Ready throughout").isGreaterThanOrEqualTo(1);
            shape.assertHandoversClean();
        }
    }
}
