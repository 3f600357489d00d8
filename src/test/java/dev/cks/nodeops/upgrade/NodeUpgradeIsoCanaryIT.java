package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The ISO canary of the packaged operator on the KWOK bed, against the CloudStack simulator: its attach, its Job and its
 * detach as a real API server and a real Job controller see them. KWOK completes the canary's Job but serves no pod log,
 * so the canary reaches no verdict here: an ISO that was never judged is never used, and the NodeUpgrade is refused with
 * nothing cordoned. Good and bad verdicts are judged on the real node (KubeadmUpgradeRealIT) and in the reconciler's unit tests.
 */
class NodeUpgradeIsoCanaryIT extends NodeUpgradeScenario {
    private CloudStackFixture cloudStack;
    private SimulatedVersion version;

    NodeUpgradeIsoCanaryIT() {
        super("nucanary");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        cloudStack = CloudStackFixture.forNodes(shared, "nucanary", "CloudManaged", List.of());
        version = cloudStack.simulator().addSupportedVersion("1.35.9");
        return cloudStack.operatorProperties();
    }

    @Override
    protected void finish() {
        if (cloudStack != null) {
            cloudStack.close();
        }
    }

    private String node(boolean controlPlane) {
        String name = controlPlane ? bed.controlPlane(UpgradeBed.FROM) : bed.worker(UpgradeBed.FROM);
        cloudStack.addNodeVm(bed.node(name));
        return name;
    }

    /**
     * Shape: a CKS cluster of one control-plane node and one worker, CloudStackIso, a bed that runs neither CoreDNS nor
     * kube-proxy. Other actor: KWOK, completing the canary's Job without a log.
     */
    @Test
    void aCanaryWithoutAVerdictRefusesTheUpgradeWithNothingCordonedAndItsIsoAttachedAndDetachedOnce() {
        String control = node(true);
        String worker = node(false);
        cloudStack.simulator().clearCalls();
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);

        bed.create("nu-canary", executor, spec -> { });
        NodeUpgrade refused = bed.await("nu-canary", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Failed));

        Condition accepted = Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED).orElseThrow();
        assertThat(accepted.getStatus()).isEqualTo("False");
        assertThat(accepted.getReason()).isEqualTo(IsoCanary.ISO_REFUSED);
        assertThat(accepted.getMessage()).contains("failed the ISO canary on node " + control).contains("without a verdict")
                .contains("Nothing was cordoned");
        String controlVm = cloudStack.vmId(control);
        assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                .containsExactly(tuple(version.isoId(), controlVm));
        assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(controlVm);
        assertThat(cloudStack.simulator().vm(controlVm).isoId()).isNull();
        IsoCanaryStatus canary = refused.getStatus().getIsoCanary();
        assertThat(canary.getVerdict()).isEqualTo(IsoCanaryStatus.Verdict.Failed);
        Job job = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(canary.getJobName()).get();
        assertThat(job.getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_ISO_CANARY, control).doesNotContainKey(UpgradeJob.LABEL_NODE);
        assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand())
                .endsWith("1.35.9", "--without", "coredns", "--without", "kube-proxy");
        assertThat(kubelets.jobsOn(List.of(control, worker))).as("no upgrade Job").isEmpty();
        assertThat(bed.events("nu-canary")).noneMatch(e -> e.getReason().equals(dev.cks.nodeops.operation.OperationRecorder.CORDONED));
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }
}
