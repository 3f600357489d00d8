package dev.cks.nodeops.testbed;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cks.nodeops.cloudstack.CloudStackCredentials;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVersion;
import dev.cks.nodeops.cloudstack.simulator.SimulatedVm;
import dev.cks.nodeops.nodes.VersionMatch;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.SecretBuilder;

/**
 * A CloudStack simulator seeded with a CKS cluster whose VM map matches the given KWOK nodes, and
 * the Secret the operator reads its credentials from (in CKS's own format: an INI under
 * `cloud-config`). Each fixture has its own simulator and Secret, so test classes don't collide.
 */
public final class CloudStackFixture implements AutoCloseable {
    public static final String SECRET_NAMESPACE = "kube-system";

    private final TestBed bed;
    private final CloudStackSimulator simulator;
    private final SimulatedCluster cluster;
    private final String secretName;
    private final SimulatedVersion supportedVersion;
    private final Map<String, String> vmIdsByNode = new LinkedHashMap<>();

    private CloudStackFixture(TestBed bed, CloudStackSimulator simulator, SimulatedCluster cluster, String secretName,
            SimulatedVersion supportedVersion) {
        this.bed = bed;
        this.simulator = simulator;
        this.cluster = cluster;
        this.secretName = secretName;
        this.supportedVersion = supportedVersion;
    }

    /** A CloudManaged cluster named `clusterName` whose VM map holds one VM per node, named as the node. */
    public static CloudStackFixture forNodes(TestBed bed, String clusterName, String clusterType, List<Node> nodes) {
        CloudStackSimulator simulator = CloudStackSimulator.start(bed.simulatorAddress(), 0, java.time.Clock.systemUTC());
        SimulatedVersion version = simulator.addSupportedVersion("1.35.4");
        SimulatedCluster cluster = simulator.addCluster(clusterName, Owner.of(simulator.defaultAccount()), clusterType, version.id());
        CloudStackFixture fixture = new CloudStackFixture(bed, simulator, cluster, "cloudstack-" + clusterName, version);
        for (Node node : nodes) {
            fixture.addNodeVm(node);
        }
        fixture.writeSecret();
        return fixture;
    }

    /**
     * The node's VM, as if CKS had installed the node: its map row records the version the node's
     * kubelet reports (kubernetes_node_version), so a bed is not out of step with CloudStack's record
     * until a test upgrades a node.
     */
    public SimulatedVm addNodeVm(Node node) {
        boolean control = node.getMetadata().getLabels().containsKey("node-role.kubernetes.io/control-plane");
        SimulatedVm vm = simulator.addClusterVm(cluster, node.getMetadata().getName(), control ? NodeRole.CONTROL : NodeRole.WORKER);
        String kubelet = node.getStatus() == null || node.getStatus().getNodeInfo() == null ? null
                : node.getStatus().getNodeInfo().getKubeletVersion();
        VersionMatch.normalize(kubelet).ifPresent(version -> simulator.setRecordedNodeVersion(vm.id(), version));
        vmIdsByNode.put(node.getMetadata().getName(), vm.id());
        return vm;
    }

    /** Every API key and secret key a fixture of this run handed to an operator: what SecretsScanIT looks for. */
    private static final java.util.Set<String> KEYS_OF_THE_RUN = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The keys of every fork of the run ({@link TestRun}). */
    public static java.util.Set<String> keysOfTheRun() {
        return TestRun.withRecorded(KEYS_OF_THE_RUN, TestRun.CLOUDSTACK_KEYS);
    }

    private static void recordKey(String key) {
        if (KEYS_OF_THE_RUN.add(key)) {
            TestRun.record(TestRun.CLOUDSTACK_KEYS, key);
        }
    }

    private void writeSecret() {
        writeSecret(simulator.credentials().secretKey());
    }

    /**
     * Puts a secret key CloudStack does not accept in the Secret (as a botched key rotation would), until
     * the returned handle is closed and the right one is back.
     */
    public AutoCloseable wrongSecretKey() {
        writeSecret("wrong-" + Long.toHexString(System.nanoTime()));
        return this::writeSecret;
    }

    private void writeSecret(String secretKey) {
        CloudStackCredentials credentials = simulator.credentials();
        recordKey(credentials.apiKey());
        recordKey(secretKey);
        String ini = "[Global]\napi-url = " + credentials.apiUrl() + "\napi-key = " + credentials.apiKey()
                + "\nsecret-key = " + secretKey + "\n";
        bed.client().secrets().inNamespace(SECRET_NAMESPACE).resource(new SecretBuilder()
                .withNewMetadata().withName(secretName).withNamespace(SECRET_NAMESPACE).endMetadata()
                .addToStringData("cloud-config", ini)
                .build()).serverSideApply();
    }

    /**
     * Signed requests valid for 15 s, and a write that left no trace sent again 20 s after it was recorded (production:
     * 10 min + 90 s). For the classes that kill the operator between recording a write's intent and sending it: the new
     * process must wait until CloudStack can no longer take the request it finds no trace of, and these settings make
     * that wait fit a test while keeping it real (the simulator refuses a request past its expires, as CloudStack does).
     */
    public static final Map<String, String> SHORT_SIGNATURE_LIFETIME = Map.of(
            "cks.cloudstack.signature-lifetime-seconds", "15", "cks.cloudstack.signature-expiry-margin-seconds", "5");

    /** How long, with {@link #SHORT_SIGNATURE_LIFETIME}, a request sent (or about to be) may still reach CloudStack. */
    public static final java.time.Duration SHORT_REQUEST_WINDOW = java.time.Duration.ofSeconds(20);

    /** Properties that point an operator process at this fixture's Secret and cluster. */
    public Map<String, String> operatorProperties() {
        return Map.of("cks.cloudstack.secret-namespace", SECRET_NAMESPACE, "cks.cloudstack.secret-name", secretName);
    }

    public CloudStackSimulator simulator() {
        return simulator;
    }

    public SimulatedCluster cluster() {
        return cluster;
    }

    /** The Kubernetes supported version 1.35.4 (with its binaries ISO) the fixture registers. */
    public SimulatedVersion supportedVersion() {
        return supportedVersion;
    }

    public String vmId(String nodeName) {
        return vmIdsByNode.get(nodeName);
    }

    @Override
    public void close() {
        simulator.close();
        bed.client().secrets().inNamespace(SECRET_NAMESPACE).withName(secretName).delete();
    }
}
