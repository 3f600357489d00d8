package dev.cks.nodeops.realnode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.LoopDeviceIsoDrive;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeSpec;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeExecutor;
import dev.cks.nodeops.upgrade.UpgradeJob;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The real node at {@link #FROM} set up as a CKS cluster's only control node: CloudStack (the
 * simulator) knows its VM and the supported version {@link #TARGET} whose binaries ISO, when
 * attached, becomes a loop device of this machine; the operator runs as a process on the host with
 * the chart's ServiceAccount and RBAC (it must not run on the node it drains and whose API server
 * restarts under it; one machine has one real node, see docs/real-node.md).
 */
final class CksUpgradeBed implements AutoCloseable {
    static final String FROM = "v1.34.4";
    static final String TARGET = "v1.35.4";
    private static final Duration ISO_BUILD = Duration.ofMinutes(60);
    private static final Pattern IMAGE = Pattern.compile("(?m)^\\s*image:\\s*(\\S+)\\s*$");

    final TestBed bed;
    final KubernetesClient client;
    final String node;
    final Path goodIso;
    final Path isoWithoutKubeadm;
    final CloudStackFixture cloudStack;
    final LoopDeviceIsoDrive drive;
    /** One exit of the operator process, and when it was started again. */
    record Restart(Instant exited, int exitCode, Instant restarted) {
    }

    /** How long the kubelet waits before it restarts a container that exited (its first crash back-off step). */
    static final Duration RESTART_DELAY = Duration.ofSeconds(10);
    private volatile OperatorProcess operator;
    private final List<Restart> restarts = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean closing;
    private final Thread restarter;

    private CksUpgradeBed(TestBed bed, String operatorName) throws IOException {
        this.bed = bed;
        this.client = bed.client();
        this.node = bed.realNode("node");
        assertThat(bed.realNode("controlPlaneVersion")).isEqualTo(FROM);
        assertThat(bed.serverVersion()).isEqualTo(FROM);
        // As CloudStack's operators build them (scripts/util/create-kubernetes-binaries-iso.sh), cached between runs.
        this.goodIso = Path.of(bed.testbed(ISO_BUILD, "binaries-iso", TARGET).strip());
        this.isoWithoutKubeadm = Path.of(bed.testbed(ISO_BUILD, "binaries-iso", TARGET, "k8s/kubeadm").strip());
        List<Node> nodes = new ArrayList<>();
        nodes.add(client.nodes().withName(node).get());
        nodes.addAll(client.nodes().withLabel("type", "kwok").list().getItems());
        this.cloudStack = CloudStackFixture.forNodes(bed, TestBed.CLUSTER, "CloudManaged", nodes);
        this.drive = new LoopDeviceIsoDrive(Set.of(cloudStack.vmId(node)));
        cloudStack.simulator().useIsoDrive(drive);
        // As the README's install says: the CRDs first, and the upgrade Jobs are privileged pods.
        bed.installCrds();
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(TestBed.OPERATOR_NAMESPACE)
                .addToLabels("pod-security.kubernetes.io/enforce", "privileged").endMetadata().build()).serverSideApply();
        Map<String, String> properties = new java.util.HashMap<>(cloudStack.operatorProperties());
        properties.put("cks.namespace", TestBed.OPERATOR_NAMESPACE);
        properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
        properties.put("cks.upgrade.job-image", bed.realNode("shellImage"));
        properties.put("cks.audit.enabled", "false");
        properties.put("cks.leader-election.identity", operatorName);
        // The production Lease timings (the bed's short ones are for tests that kill operators): what a
        // cluster owner runs must ride out the API server restarting under `kubeadm upgrade apply`.
        properties.put("cks.leader-election.lease-duration-seconds", "150");
        properties.put("cks.leader-election.renew-deadline-seconds", "120");
        properties.put("cks.leader-election.retry-period-seconds", "5");
        this.operator = OperatorProcess.start(bed, operatorName, properties);
        // As its Deployment would: an operator that exits is started again (and the test sees that it did).
        this.restarter = new Thread(this::restartWhenExited, "operator-restarter");
        restarter.setDaemon(true);
        restarter.start();
    }

    private void restartWhenExited() {
        while (!closing) {
            OperatorProcess current = operator;
            if (!current.isAlive()) {
                Instant exited = Instant.now();
                pause(RESTART_DELAY.toMillis());
                if (closing) {
                    return;
                }
                try {
                    operator = current.restarted();
                    restarts.add(new Restart(exited, current.exitValue(), Instant.now()));
                } catch (IOException e) {
                    System.err.println("[cks-upgrade-bed] could not restart the operator: " + e.getMessage());
                    return;
                }
            }
            pause(200);
        }
    }

    /** The operator process running now. */
    OperatorProcess operator() {
        return operator;
    }

    /** Each time the operator process exited and was started again. */
    List<Restart> restarts() {
        return List.copyOf(restarts);
    }

    static CksUpgradeBed start(TestBed bed, String operatorName) throws IOException {
        return new CksUpgradeBed(bed, operatorName);
    }

    /** The file CloudStack's ISO of {@link #TARGET} holds from now on. */
    void useIso(Path iso) {
        drive.setIsoFile(cloudStack.supportedVersion().isoId(), iso);
    }

    /** A NodeUpgrade of the real node to {@link #TARGET} with the CloudStackIso executor, as a cluster owner writes it. */
    NodeUpgrade create(String name) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName(name);
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", node)));
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);
        executor.setJobTimeoutSeconds(1200);
        spec.setExecutor(executor);
        spec.setReadyTimeoutSeconds(600);
        spec.getDrain().setTimeoutSeconds(300);
        upgrade.setSpec(spec);
        return client.resource(upgrade).create();
    }

    /** Waits for the NodeUpgrade to reach Succeeded or Failed; API errors (its server restarting) are waited out. */
    NodeUpgrade awaitFinished(String name, Duration timeout) {
        return awaitFinished(name, timeout, null);
    }

    /** The same, for the attempt with this retry token (the value of the retry annotation it was started by). */
    NodeUpgrade awaitFinished(String name, Duration timeout, String retryToken) {
        Instant end = Instant.now().plus(timeout);
        while (Instant.now().isBefore(end)) {
            try {
                NodeUpgrade current = client.resources(NodeUpgrade.class).withName(name).get();
                if (current != null && current.getStatus() != null && (current.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded
                        || current.getStatus().getPhase() == NodeUpgradeStatus.Phase.Failed)
                        && (retryToken == null || retryToken.equals(current.getStatus().getRetryToken()))) {
                    return current;
                }
            } catch (RuntimeException apiServerRestarting) {
                // asked again below
            }
            pause(1000);
        }
        throw new AssertionError("NodeUpgrade " + name + " did not finish within " + timeout + "; operator log:\n" + operator().logTail());
    }

    /** component → image of the static pod manifests kubeadm writes (what `kubeadm upgrade apply` changes). */
    static Map<String, String> manifestImages() throws IOException {
        Map<String, String> images = new TreeMap<>();
        try (var files = Files.list(Path.of("/etc/kubernetes/manifests"))) {
            for (Path file : files.toList()) {
                Matcher image = IMAGE.matcher(Files.readString(file));
                if (image.find()) {
                    images.put(file.getFileName().toString().replace(".yaml", ""), image.group(1));
                }
            }
        }
        return images;
    }

    /**
     * The control plane and the node are at {@link #TARGET}: the API server says so, and so do the static
     * pods' manifests and the node's kubelet; the node is Ready and not cordoned.
     */
    void assertUpgradedToTarget() throws IOException {
        assertThat(serverVersion()).isEqualTo(TARGET);
        Map<String, String> images = manifestImages();
        for (String component : List.of("kube-apiserver", "kube-controller-manager", "kube-scheduler")) {
            assertThat(images).containsEntry(component, "registry.k8s.io/" + component + ":" + TARGET);
        }
        Node upgraded = client.nodes().withName(node).get();
        assertThat(upgraded.getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(TARGET);
        assertThat(TestBed.isReady(upgraded)).as("Ready").isTrue();
        assertThat(upgraded.getSpec().getUnschedulable()).as("uncordoned").isNotEqualTo(Boolean.TRUE);
    }

    /** What the API server says its version is, asked now. */
    String serverVersion() {
        return client.getKubernetesVersion().getGitVersion();
    }

    /** The upgrade Jobs the operator made for this NodeUpgrade, oldest first (not the ISO canary's: {@link #canaryJobsOf}). */
    List<Job> jobsOf(String nodeUpgrade) {
        return allJobsOf(nodeUpgrade).stream().filter(j -> j.getMetadata().getLabels().containsKey(UpgradeJob.LABEL_NODE)).toList();
    }

    /** The ISO canary's Jobs of this NodeUpgrade, oldest first. */
    List<Job> canaryJobsOf(String nodeUpgrade) {
        return allJobsOf(nodeUpgrade).stream().filter(j -> j.getMetadata().getLabels().containsKey(UpgradeJob.LABEL_ISO_CANARY)).toList();
    }

    private List<Job> allJobsOf(String nodeUpgrade) {
        return client.batch().v1().jobs().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel(UpgradeJob.LABEL_NODEUPGRADE, nodeUpgrade)
                .list().getItems().stream().sorted(java.util.Comparator.comparing(j -> j.getMetadata().getCreationTimestamp())).toList();
    }

    /** The log of a Job's pod, read from the node's disk (what the kubelet keeps, also while the API server is down). */
    String jobLog(Job job) throws IOException {
        StringBuilder log = new StringBuilder();
        for (Pod pod : client.pods().inNamespace(TestBed.OPERATOR_NAMESPACE).withLabel("job-name", job.getMetadata().getName()).list().getItems()) {
            Path dir = Path.of("/var/log/pods", TestBed.OPERATOR_NAMESPACE + "_" + pod.getMetadata().getName() + "_" + pod.getMetadata().getUid(), "upgrade");
            if (Files.isDirectory(dir)) {
                try (var files = Files.list(dir)) {
                    for (Path file : files.sorted().toList()) {
                        // CRI log lines: <time> <stream> <tag> <text>
                        Files.readAllLines(file).forEach(line -> log.append(line.split(" ", 4).length == 4 ? line.split(" ", 4)[3] : line).append('\n'));
                    }
                }
            }
        }
        return log.toString();
    }

    /** Whether anything is mounted where CKS's scripts mount the ISO. */
    static boolean isoMounted() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(line -> line.split(" ")[4].equals("/mnt/k8sdisk"));
    }

    /** The systemctl calls the bed's stand-in saw (kubeadm's and the upgrade script's), with their times. */
    List<String> systemctlCalls() throws IOException {
        Path log = Path.of(bed.realNode("stateDir"), "systemctl.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    @Override
    public void close() {
        closing = true;
        try {
            restarter.join(RESTART_DELAY.toMillis() + 2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        operator.close();
        cloudStack.close();
    }

    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
