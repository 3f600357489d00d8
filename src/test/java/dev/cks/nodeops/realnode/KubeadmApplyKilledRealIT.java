package dev.cks.nodeops.realnode;

import static dev.cks.nodeops.realnode.CksUpgradeBed.FROM;
import static dev.cks.nodeops.realnode.CksUpgradeBed.TARGET;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testbed.LoopDeviceIsoDrive;
import dev.cks.nodeops.testbed.RealNode;
import dev.cks.nodeops.testbed.RealNodeExtension;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The upgrade Job killed in the middle of `kubeadm upgrade apply` (every process of its container
 * gets SIGKILL, as when the node's runtime or an admin kills it) once kubeadm has upgraded the API
 * server and before it is done with the rest: the NodeUpgrade says the node Failed with the Job's
 * end and its log, the ISO is detached, and a retry on the half-upgraded control plane completes.
 * On a node of its own (a fresh {@link CksUpgradeBed#FROM} control plane).
 */
@ExtendWith(RealNodeExtension.class)
@RealNode(controlPlane = FROM, kubelet = FROM)
@Order(Integer.MAX_VALUE / 2 + 20)
class KubeadmApplyKilledRealIT {
    static final String NAME = "cks-apply-killed";

    @Test
    void aJobKilledMidApplyIsReportedAsFailedAndARetryCompletes(TestBed bed) throws Exception {
        try (CksUpgradeBed cks = CksUpgradeBed.start(bed, "realupgrade-killed-operator")) {
            cks.useIso(cks.goodIso);
            cks.cloudStack.simulator().clearCalls();
            cks.create(NAME);

            Pod pod = Awaitility.await("the upgrade Job's container runs").atMost(Duration.ofMinutes(10)).ignoreExceptions()
                    .until(() -> jobPod(cks, 0), p -> p != null && p.getStatus().getContainerStatuses() != null
                            && !p.getStatus().getContainerStatuses().isEmpty() && p.getStatus().getContainerStatuses().get(0).getContainerID() != null);
            Path log = Path.of("/var/log/pods", TestBed.OPERATOR_NAMESPACE + "_" + pod.getMetadata().getName() + "_" + pod.getMetadata().getUid(),
                    "upgrade", "0.log");
            // The log file on the node's disk: the API server is restarting at about this time.
            Awaitility.await("kubeadm has upgraded the API server").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofMillis(100))
                    .until(() -> Files.exists(log) && Files.readString(log).contains("Component \"kube-apiserver\" upgraded successfully!"));
            String containerId = pod.getStatus().getContainerStatuses().get(0).getContainerID().replaceFirst("^containerd://", "");
            kill(containerId);
            Map<String, String> imagesAtKill = CksUpgradeBed.manifestImages();
            assertThat(imagesAtKill).as("killed half-way: the API server upgraded, the scheduler not yet")
                    .containsEntry("kube-apiserver", "registry.k8s.io/kube-apiserver:" + TARGET)
                    .containsEntry("kube-scheduler", "registry.k8s.io/kube-scheduler:" + FROM);

            NodeUpgrade failed = cks.awaitFinished(NAME, Duration.ofMinutes(10));
            assertThat(failed.getStatus().getPhase()).as("what the NodeUpgrade says after the kill").isEqualTo(NodeUpgradeStatus.Phase.Failed);
            UpgradeNodeStatus node = UpgradeWatch.nodeStatus(failed, cks.node);
            assertThat(node.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Failed);
            assertThat(node.getError()).as("the Job's end and where its script was")
                    .contains("The upgrade Job " + TestBed.OPERATOR_NAMESPACE + "/" + cks.jobsOf(NAME).get(0).getMetadata().getName())
                    .contains("failed").contains("Component \"kube-apiserver\" upgraded successfully!");
            assertThat(node.getIsoState()).isEqualTo(UpgradeNodeStatus.IsoState.Detached);
            assertThat(cks.cloudStack.simulator().calls("attachIso")).as("the ISO canary's, then the upgrade's").hasSize(2);
            assertThat(cks.cloudStack.simulator().calls("detachIso")).as("the ISO canary's, then the upgrade's").hasSize(2);
            assertThat(cks.client.nodes().withName(cks.node).get().getStatus().getNodeInfo().getKubeletVersion())
                    .as("the kubelet was not replaced").isEqualTo(FROM);

            // As docs/upgrade.md tells a cluster owner: kubectl annotate nu NAME nodeops.cks.dev/retry=... --overwrite
            bed.tool("kubectl", "annotate", "nu", NAME, NodeAnnotations.RETRY + "=after-the-kill", "--overwrite");
            NodeUpgrade retried = cks.awaitFinished(NAME, Duration.ofMinutes(25), "after-the-kill");
            String secondLog = cks.jobLog(cks.jobsOf(NAME).get(cks.jobsOf(NAME).size() - 1));
            assertThat(retried.getStatus().getPhase()).as("the retry\n%s", secondLog).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
            UpgradeNodeStatus upgraded = UpgradeWatch.nodeStatus(retried, cks.node);
            assertThat(upgraded.getFromVersion()).isEqualTo(FROM);
            assertThat(upgraded.getVersion()).isEqualTo(TARGET);
            List<Job> jobs = cks.jobsOf(NAME);
            assertThat(jobs).as("one Job per attempt").hasSize(2);
            cks.assertUpgradedToTarget();
            // The canary's verdict stands for its target: the retry attaches the ISO for its upgrade only.
            assertThat(cks.cloudStack.simulator().calls("attachIso")).hasSize(3);
            assertThat(cks.cloudStack.simulator().calls("detachIso")).hasSize(3);
            assertThat(cks.canaryJobsOf(NAME)).as("one ISO canary").hasSize(1);
            assertThat(LoopDeviceIsoDrive.loopDevicesOf(cks.goodIso)).as("loop devices of the ISO").isEmpty();
            assertThat(CksUpgradeBed.isoMounted()).as("/mnt/k8sdisk mounted").isFalse();
            // Alone (-Dit.test=KubeadmApplyKilledRealIT) no class before it has made the directory.
            Path kept = Files.createDirectories(bed.projectRoot().resolve("target/realupgrade")).resolve("killed-retry-job.log");
            Files.writeString(kept, secondLog);
        }
    }

    private static Pod jobPod(CksUpgradeBed cks, int attempt) {
        List<Job> jobs = cks.jobsOf(NAME);
        if (jobs.size() <= attempt) {
            return null;
        }
        List<Pod> pods = cks.client.pods().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel("job-name", jobs.get(attempt).getMetadata().getName())
                .list().getItems();
        return pods.isEmpty() ? null : pods.get(0);
    }

    /** SIGKILL to every process of the container, through the node's containerd. */
    private static void kill(String containerId) throws Exception {
        Process process = new ProcessBuilder("ctr", "--address", "/run/containerd/containerd.sock", "-n", "k8s.io", "tasks", "kill", "--all",
                "--signal", "SIGKILL", containerId).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("ctr tasks kill: %s", output).isZero();
    }
}
