package dev.cks.nodeops.realnode;

import static dev.cks.nodeops.realnode.CksUpgradeBed.FROM;
import static dev.cks.nodeops.realnode.CksUpgradeBed.TARGET;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.testbed.LoopDeviceIsoDrive;
import dev.cks.nodeops.testbed.RealNode;
import dev.cks.nodeops.testbed.RealNodeExtension;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * The product's headline on a real control plane: the operator upgrades a kubeadm control-plane node
 * from {@link CksUpgradeBed#FROM} to {@link CksUpgradeBed#TARGET} the CKS way. CloudStack attaches the
 * version's binaries ISO to the node's VM (here: a loop device of this machine), the operator's Job
 * runs its copy of CKS's node script in the host's namespaces (mount the ISO found by blkid, import
 * the images, install kubeadm, `kubeadm upgrade apply`, replace kubelet and kubectl, restart the
 * kubelet through systemctl), the ISO is detached, the node comes back Ready and is uncordoned.
 * Nothing of the upgrade is simulated but CloudStack's API and the hypervisor's CD-ROM, and systemd
 * (this machine has none): the bed's systemctl stand-in drives the kubelet "unit".
 *
 * First an ISO without k8s/kubeadm: the ISO canary refuses it before the node is cordoned, and nothing of
 * the control plane changes. Then the real upgrade, timed phase by phase, with the API server's outage
 * measured (target/realupgrade/: report.md, kubectl-get-nu-w.txt, the Job's log).
 */
@ExtendWith(RealNodeExtension.class)
@RealNode(controlPlane = FROM, kubelet = FROM)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@org.junit.jupiter.api.Order(Integer.MAX_VALUE / 2 + 10)
class KubeadmUpgradeRealIT {
    static final String WORKLOAD = "web";
    static final int REPLICAS = 2;

    private CksUpgradeBed cks;
    private String workloadNamespace;

    @BeforeAll
    void setUp(TestBed bed) throws Exception {
        cks = CksUpgradeBed.start(bed, "realupgrade-operator");
        // A workload only the real node may run: drained, its pods wait (Pending) until the upgraded node takes them back.
        workloadNamespace = bed.newNamespace("cks-workload");
        Path events = bed.projectRoot().resolve("target/realupgrade/workload-events");
        Files.createDirectories(events);
        Deployment web = RealPods.graceful(WORKLOAD, REPLICAS, bed.realNode("shellImage"), events, 10, 1);
        web.getSpec().getTemplate().getSpec().setNodeSelector(Map.of("kubernetes.io/hostname", cks.node));
        cks.client.apps().deployments().inNamespace(workloadNamespace).resource(web).create();
        awaitWorkloadReadyOnTheNode(Instant.EPOCH);
    }

    @AfterAll
    void tearDown() {
        if (cks != null) {
            cks.close();
        }
    }

    /**
     * Shape: the real kubeadm control-plane node, CloudStackIso, an ISO of the target without k8s/kubeadm. Other actor: whoever
     * registered that ISO. The ISO canary finds it before the node is cordoned; before the canary, the node was cordoned and
     * drained and its upgrade Job failed on the missing kubeadm.
     */
    @Test
    @Order(1)
    void anIsoWithoutKubeadmIsRefusedByTheCanaryBeforeAnyCordonAndChangesNothing() throws Exception {
        Map<String, String> imagesBefore = CksUpgradeBed.manifestImages();
        assertThat(imagesBefore).as("the control plane at %s", FROM).containsEntry("kube-apiserver", "registry.k8s.io/kube-apiserver:" + FROM);
        cks.useIso(cks.isoWithoutKubeadm);
        cks.cloudStack.simulator().clearCalls();
        int systemctlBefore = cks.systemctlCalls().size();
        List<String> cordons = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (var watch = cks.client.nodes().withName(cks.node).watch(new io.fabric8.kubernetes.client.Watcher<>() {
            @Override
            public void eventReceived(Action action, io.fabric8.kubernetes.api.model.Node node) {
                if (Boolean.TRUE.equals(node.getSpec().getUnschedulable())) {
                    cordons.add(node.getMetadata().getResourceVersion());
                }
            }

            @Override
            public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
            }
        })) {
            cks.create("cks-iso-without-kubeadm");
            NodeUpgrade refused = cks.awaitFinished("cks-iso-without-kubeadm", Duration.ofMinutes(10));

            assertThat(refused.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Failed);
            io.fabric8.kubernetes.api.model.Condition accepted = dev.cks.nodeops.common.Conditions.find(refused.getStatus().getConditions(),
                    dev.cks.nodeops.common.Conditions.ACCEPTED).orElseThrow();
            assertThat(accepted.getStatus()).isEqualTo("False");
            assertThat(accepted.getMessage()).as("the canary's finding, from its Job's log")
                    .contains("failed the ISO canary on node " + cks.node).contains("kubeadm: the ISO has no k8s/kubeadm").contains("Nothing was cordoned");
            assertThat(refused.getStatus().getIsoCanary().getProblems()).contains("kubeadm: the ISO has no k8s/kubeadm");
            assertThat(UpgradeWatch.nodeStatus(refused, cks.node).getPhase()).as("never started").isEqualTo(UpgradeNodeStatus.Phase.Pending);
        }
        assertThat(cordons).as("the node was never cordoned").isEmpty();
        assertThat(cks.jobsOf("cks-iso-without-kubeadm")).as("no upgrade Job").isEmpty();
        assertThat(cks.canaryJobsOf("cks-iso-without-kubeadm")).hasSize(1);
        assertThat(cks.cloudStack.simulator().calls("attachIso")).hasSize(1);
        assertThat(cks.cloudStack.simulator().calls("detachIso")).hasSize(1);
        assertThat(cks.drive.changes()).extracting(LoopDeviceIsoDrive.Change::action).containsExactly("insert", "eject");
        assertThat(LoopDeviceIsoDrive.loopDevicesOf(cks.isoWithoutKubeadm)).as("loop devices of the ISO").isEmpty();
        assertThat(CksUpgradeBed.isoMounted()).as("/mnt/k8sdisk mounted").isFalse();
        // The control plane is as it was: versions, manifests, kubelet, kubeadm.
        assertThat(CksUpgradeBed.manifestImages()).isEqualTo(imagesBefore);
        assertThat(cks.serverVersion()).isEqualTo(FROM);
        assertThat(cks.client.nodes().withName(cks.node).get().getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(FROM);
        assertThat(Files.isSymbolicLink(Path.of("/opt/bin/kubeadm"))).as("/opt/bin/kubeadm is still the node's own").isTrue();
        assertThat(cks.systemctlCalls().subList(systemctlBefore, cks.systemctlCalls().size())).as("the kubelet unit left alone").isEmpty();
        awaitWorkloadReadyOnTheNode(Instant.EPOCH);

        cks.client.resources(NodeUpgrade.class).withName("cks-iso-without-kubeadm").delete();
        Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> cks.client.resources(NodeUpgrade.class).withName("cks-iso-without-kubeadm").get() == null);
    }

    @Test
    @Order(2)
    void theOperatorUpgradesTheControlPlaneTheCksWay() throws Exception {
        String name = "cks-upgrade";
        cks.useIso(cks.goodIso);
        cks.cloudStack.simulator().clearCalls();
        int driveChangesBefore = cks.drive.changes().size();
        int systemctlBefore = cks.systemctlCalls().size();
        assertThat(addonObjects()).as("the ISO's addon objects before the upgrade").isEmpty();
        Path dir = cks.bed.projectRoot().resolve("target/realupgrade");
        NodeUpgrade done;
        UpgradeWatch watch = new UpgradeWatch(cks.bed, name, cks.node, dir);
        Instant created;
        try {
            created = Instant.now();
            cks.create(name);
            done = cks.awaitFinished(name, Duration.ofMinutes(25));
            // The workload comes back on the upgraded node while the watch still runs.
            awaitWorkloadReadyOnTheNode(created);
        } finally {
            watch.close();
        }
        List<Job> jobs = cks.jobsOf(name);
        String jobLog = jobs.isEmpty() ? "" : cks.jobLog(jobs.get(0));
        List<String> systemctl = cks.systemctlCalls().subList(systemctlBefore, cks.systemctlCalls().size());
        UpgradeReport report = new UpgradeReport(created, done, watch, cks.drive.changes().subList(driveChangesBefore, cks.drive.changes().size()),
                jobs, jobLog, systemctl, cks.bed.eventsOf(name), cks.operator(), cks.restarts());
        report.write(dir.resolve("report.md"));

        assertThat(done.getStatus().getPhase()).as("%s\n%s", done.getStatus().getMessage(), jobLog).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        UpgradeNodeStatus node = UpgradeWatch.nodeStatus(done, cks.node);
        assertThat(node.getPhase()).isEqualTo(UpgradeNodeStatus.Phase.Succeeded);
        assertThat(node.getFromVersion()).isEqualTo(FROM);
        assertThat(node.getVersion()).isEqualTo(TARGET);

        cks.assertUpgradedToTarget();
        assertThat(Files.isSymbolicLink(Path.of("/opt/bin/kubelet"))).as("/opt/bin/kubelet replaced by the ISO's").isFalse();

        // kubeadm upgrade apply ran once, in the one Job of this NodeUpgrade, and succeeded.
        assertThat(jobs).hasSize(1);
        assertThat(count(jobLog, "kubeadm upgrade apply " + TARGET)).as("the script's apply line\n%s", jobLog).isEqualTo(1);
        assertThat(count(jobLog, "[upgrade] SUCCESS! A control plane node of your cluster was upgraded to \"" + TARGET + "\"")).isEqualTo(1);
        assertThat(systemctl).as("the script stopped and restarted the kubelet unit")
                .anyMatch(line -> line.endsWith("systemctl stop kubelet")).anyMatch(line -> line.endsWith("systemctl restart kubelet"));

        // The ISO's addons, as CKS's upgrade applies them on its main control node: network.yaml, and headlamp.yaml
        // where the ISO has it (the bed's has dashboard.yaml too, which is then not applied); once each, from this ISO.
        assertThat(node.getAddons()).isEqualTo("network.yaml applied; headlamp.yaml applied");
        assertThat(addonObjects()).as("the addon objects the script's kubectl apply made")
                .containsOnlyKeys("cks-bed-addon-network", "cks-bed-addon-headlamp").allSatisfy((addon, data) -> assertThat(data).containsEntry("isoVersion", TARGET));
        assertThat(count(jobLog, "cks-addon network.yaml applied")).as("network.yaml applied once\n%s", jobLog).isEqualTo(1);
        assertThat(done.getStatus().getConditions()).filteredOn(c -> c.getType().equals("AddonsApplied")).singleElement()
                .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"));


        // The ISO was attached and detached once for the canary, which passed it, then once for the upgrade; nothing of it is left.
        assertThat(done.getStatus().getIsoCanary().getVerdict()).isEqualTo(dev.cks.nodeops.upgrade.IsoCanaryStatus.Verdict.Passed);
        assertThat(cks.cloudStack.simulator().calls("attachIso")).hasSize(2);
        assertThat(cks.cloudStack.simulator().calls("detachIso")).hasSize(2);
        assertThat(report.driveChanges()).extracting(LoopDeviceIsoDrive.Change::action).containsExactly("insert", "eject", "insert", "eject");
        assertThat(LoopDeviceIsoDrive.loopDevicesOf(cks.goodIso)).as("loop devices of the ISO").isEmpty();
        assertThat(CksUpgradeBed.isoMounted()).as("/mnt/k8sdisk mounted").isFalse();

        // The API server was away while kubeadm restarted etcd and itself; the operator rode that out: the
        // NodeUpgrade was never Failed, and the operator, with the production Lease timings, never exited.
        List<UpgradeWatch.Outage> outages = watch.outages();
        assertThat(outages).as("API server outages measured").isNotEmpty();
        assertThat(watch.everSaw("nu", "Failed")).as("the NodeUpgrade was never Failed").isFalse();
        assertThat(cks.operator().isAlive()).as("the operator runs").isTrue();
        assertThat(cks.restarts()).as("operator exits during the outages %s", outages).isEmpty();
    }

    /** The ConfigMaps the bed ISO's addon manifests hold (hack/lib/realnode.sh, real_addon_manifest), by name: their data. */
    private Map<String, Map<String, String>> addonObjects() {
        return cks.client.configMaps().inNamespace("kube-system").list().getItems().stream()
                .filter(map -> map.getMetadata().getName().startsWith("cks-bed-addon-"))
                .collect(java.util.stream.Collectors.toMap(map -> map.getMetadata().getName(), map -> map.getData()));
    }

    private void awaitWorkloadReadyOnTheNode(Instant createdAfter) {
        Awaitility.await("the workload's " + REPLICAS + " pods Ready on " + cks.node).atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions().until(() -> {
                    List<Pod> ready = cks.client.pods().inNamespace(workloadNamespace).withLabel("app", WORKLOAD).list().getItems().stream()
                            .filter(p -> p.getMetadata().getDeletionTimestamp() == null && cks.node.equals(p.getSpec().getNodeName()))
                            .filter(p -> Instant.parse(p.getMetadata().getCreationTimestamp()).isAfter(createdAfter))
                            .filter(p -> p.getStatus().getConditions() != null && p.getStatus().getConditions().stream()
                                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))
                            .toList();
                    return ready.size() == REPLICAS;
                });
    }

    static int count(String text, String needle) {
        int count = 0;
        for (int at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length())) {
            count++;
        }
        return count;
    }
}
