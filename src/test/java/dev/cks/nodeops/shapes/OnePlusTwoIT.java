package dev.cks.nodeops.shapes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.OperatorPods;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;

/**
 * 1 control-plane node + 2 workers, the smallest CKS cluster a ScaleDown may shrink: the worker it removes holds
 * the leader's pod.
 *
 * <p>The shape ({@link ShapeBed}): a KWOK control-plane node with kubeadm's label and {@code NoSchedule} taint and
 * two KWOK workers at the bed's version, the cluster's three VMs in the CloudStack simulator. The actors: the chart
 * (Helm, 2 replicas, its PDB {@code maxUnavailable: 1}); the real scheduler, ReplicaSet and disruption
 * controllers; {@link OperatorPods}, the kubelet of the operator's pods (a process per pod, SIGTERM when the pod is
 * deleted); the CloudStack simulator, which takes the scale.
 */
@ExtendWith(TestBedExtension.class)
class OnePlusTwoIT {
    /**
     * The scheduler spreads the 2 replicas over two of the three nodes; the pod on a worker leads, and that worker
     * is removed. The leader drains it, its own pod last: it evicts itself (the PDB allows one), its process stops
     * and gives the Lease up, and the replica on another node leads, follows the drain to its end and sends the
     * scale, once. Preflight (Fail) predicts nothing from the operator's pods.
     */
    @Test
    void aScaleDownOfTheWorkerHoldingTheLeaderHandsOverAndRemovesIt(TestBed bed) throws Exception {
        try (ShapeBed shape = new ShapeBed(bed, "sd2", 1, 2, 2, TestBed.NODE_VERSION)) {
            List<String> placement = shape.placement();
            assertThat(placement).as("the scheduler put the replicas on two different nodes").hasSize(2).doesNotHaveDuplicates();
            String victim = placement.stream().filter(shape.workers::contains).findFirst().orElseThrow();
            String first = shape.leaderOn(victim);

            ScaleDown done = shape.run(ShapeBed.scaleDown("shape-1p2-leader", victim), s -> s.getStatus().getPhase() == ScaleDownStatus.Phase.Succeeded
                    || s.getStatus().getPhase() == ScaleDownStatus.Phase.Failed || s.getStatus().getPhase() == ScaleDownStatus.Phase.RolledBack);

            assertThat(done.getStatus().getPhase()).as(shape.diagnosis(done)).isEqualTo(ScaleDownStatus.Phase.Succeeded);
            assertThat(shape.cloudStack.simulator().calls("scaleKubernetesCluster")).as("one scale").hasSize(1);
            assertThat(shape.cloudStack.simulator().cluster(shape.cloudStack.cluster().id()).vmIds()).doesNotContain(shape.cloudStack.vmId(victim));
            assertThat(shape.client.nodes().withName(victim).get()).as("its Node deleted").isNull();
            shape.nodes().stream().filter(node -> !node.equals(victim)).forEach(shape::assertReleased);
            ShapeBed.assertPreflightFoundNothing(done.getStatus().getConditions());
            List<String> holders = shape.pods.holders();
            assertThat(holders).as("one handover, to a replica off the removed worker").hasSize(2).first().isEqualTo(first);
            assertThat(shape.pods.nodeOf(holders.get(1))).isNotEqualTo(victim);
            assertThat(shape.placement()).hasSize(2).doesNotContain(victim);
            assertThat(shape.pods.fewestHealthy()).as("the chart's PDB kept one replica Ready throughout").isGreaterThanOrEqualTo(1);
            shape.assertHandoversClean();
        }
    }
}
