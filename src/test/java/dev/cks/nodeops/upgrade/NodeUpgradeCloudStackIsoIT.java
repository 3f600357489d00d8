package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.TARGET;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/** The CKS way: the version's binaries ISO attached to each VM around a Job running CKS's node script, against the CloudStack simulator. */
@ExtendWith(TestBedExtension.class)
class NodeUpgradeCloudStackIsoIT {
    @Test
    void attachesTheTargetVersionsIsoToEachVmRunsTheNodeScriptAndDetachesIt(TestBed testBed) {
        UpgradeBed bed = new UpgradeBed(testBed, "nuiso", "iso");
        String control = bed.controlPlane(FROM);
        String worker = bed.worker(FROM);
        try (KubeletUpgradeSimulation kubelets = new KubeletUpgradeSimulation(testBed.client(), TestBed.OPERATOR_NAMESPACE);
                CloudStackFixture cloudStack = CloudStackFixture.forNodes(testBed, "nuiso", "CloudManaged", List.of(bed.node(control), bed.node(worker)))) {
            SimulatedVersion version = cloudStack.simulator().addSupportedVersion("1.35.9");
            try (OperatorProcess operator = OperatorProcess.start(testBed, "nodeupgrade-iso-it", cloudStack.operatorProperties())) {
                try {
                    UpgradeExecutor executor = new UpgradeExecutor();
                    executor.setType(UpgradeExecutor.Type.CloudStackIso);
                    bed.create("nu-iso", executor, spec -> { });
                    NodeUpgrade done = bed.await("nu-iso", Duration.ofSeconds(120), phase(NodeUpgradeStatus.Phase.Succeeded));

                    String controlVm = cloudStack.vmId(control);
                    String workerVm = cloudStack.vmId(worker);
                    assertThat(cloudStack.simulator().calls("attachIso")).extracting(c -> c.param("id"), c -> c.param("virtualmachineid"))
                            .containsExactly(tuple(version.isoId(), controlVm), tuple(version.isoId(), workerVm));
                    assertThat(cloudStack.simulator().calls("detachIso")).extracting(c -> c.param("virtualmachineid")).containsExactly(controlVm, workerVm);
                    assertThat(cloudStack.simulator().vm(controlVm).isoId()).isNull();
                    assertThat(cloudStack.simulator().vm(workerVm).isoId()).isNull();
                    assertThat(done.getStatus().getClusterId()).isEqualTo(cloudStack.cluster().id());
                    assertThat(nodeStatus(done, control).getVmId()).isEqualTo(controlVm);
                    assertThat(nodeStatus(done, worker).getVersion()).isEqualTo(TARGET);

                    ConfigMap script = testBed.client().configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(CloudStackIsoExecutor.SCRIPT_CONFIGMAP).get();
                    assertThat(script.getData().get(CloudStackIsoExecutor.SCRIPT_KEY)).contains("kubeadm upgrade apply");
                    Job controlJob = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(nodeStatus(done, control).getJobName()).get();
                    Job workerJob = testBed.client().batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(nodeStatus(done, worker).getJobName()).get();
                    assertThat(controlJob.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).endsWith("1.35.9", "true", "false", "false");
                    assertThat(workerJob.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand()).endsWith("1.35.9", "false", "false", "false");
                    assertThat(controlJob.getSpec().getTemplate().getSpec().getVolumes()).anySatisfy(v ->
                            assertThat(v.getConfigMap() == null ? null : v.getConfigMap().getName()).isEqualTo(CloudStackIsoExecutor.SCRIPT_CONFIGMAP));
                    bed.nodes.forEach(n -> bed.assertReleased(n, false));
                } finally {
                    // While the operator still runs: its finalizer cleanup must see the deletion.
                    bed.cleanUp();
                }
            }
        }
    }
}
