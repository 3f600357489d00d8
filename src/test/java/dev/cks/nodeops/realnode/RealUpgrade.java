package dev.cks.nodeops.realnode;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;

import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeSpec;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeExecutor;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * A NodeUpgrade (Script executor) of the real node, driven by the in-cluster operator whose own pod
 * runs on that node. Its drain evicts real pods with a grace period, a preStop hook and a readiness
 * probe under a PodDisruptionBudget, and the operator's pod; an operator process on the host is the
 * standby that takes the Lease over and finishes (one machine has one real node, so the standby
 * cannot be a second in-cluster replica: see docs/real-node.md). The Job's script makes the node's
 * kubelet the target version's binary and restarts it, as a package upgrade would.
 */
final class RealUpgrade {
    static final String SCRIPT_KEY = "realnode";
    private static final int REPLICAS = 3;
    private static final int MIN_AVAILABLE = 2;

    private final TestBed bed;
    private final KubernetesClient client;
    private final String operatorNamespace;
    private final String fullname;
    private final CloudStackFixture cloudStack;

    RealUpgrade(TestBed bed, KubernetesClient client, String operatorNamespace, String fullname, CloudStackFixture cloudStack) {
        this.bed = bed;
        this.client = client;
        this.operatorNamespace = operatorNamespace;
        this.fullname = fullname;
        this.cloudStack = cloudStack;
    }

    /** The script the chart installs (Helm value upgrade.scripts.realnode); it runs in the host's namespaces. */
    static String script(String stateDir) {
        return "#!/bin/sh\n"
                + "# The real test node's package upgrade: the kubelet becomes the target version's binary and restarts.\n"
                + "set -eu\n"
                + "state=" + stateDir + "\n"
                + "test -x \"$state/versions/$1/kubelet\"\n"
                + "ln -sfn \"$state/versions/$1/kubelet\" \"$state/bin/kubelet\"\n"
                + "kill \"$(cat \"$state/kubelet.pid\")\"\n";
    }

    void run() throws Exception {
        String node = bed.realNode("node");
        String target = bed.serverVersion();
        assertThat(client.nodes().withName(node).get().getStatus().getNodeInfo().getKubeletVersion())
                .as("the real node starts one version behind").isEqualTo(TestBed.REAL_NODE_VERSION).isNotEqualTo(target);

        // Fresh KWOK workers for the replacements (the ScaleDowns before removed the bed's own).
        bed.addWorker(TestBed.CLUSTER);
        bed.addWorker(TestBed.CLUSTER);
        String ns = bed.newNamespace("real-drain");
        Path events = bed.projectRoot().resolve("target/realnode-events-" + ns);
        Files.createDirectories(events);
        // The pods start on the real node: the KWOK workers take no pods until all three run.
        List<String> schedulable = client.nodes().withLabel("type", "kwok").list().getItems().stream()
                .filter(n -> n.getSpec().getUnschedulable() != Boolean.TRUE).map(n -> n.getMetadata().getName()).toList();
        schedulable.forEach(w -> bed.tool("kubectl", "cordon", w));
        // Three real pods: 20 s grace, a 3 s preStop hook, a readiness probe.
        client.apps().deployments().inNamespace(ns).resource(RealPods.graceful("web", REPLICAS, bed.realNode("shellImage"), events, 20, 3)).create();
        client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withMinAvailable(new IntOrString(MIN_AVAILABLE)).withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .build()).create();
        Awaitility.await("3 web pods Ready on the real node").atMost(Duration.ofMinutes(3)).until(() -> {
            var pdb = client.policy().v1().podDisruptionBudget().inNamespace(ns).withName("web").get();
            return pdb.getStatus() != null && Integer.valueOf(REPLICAS).equals(pdb.getStatus().getCurrentHealthy());
        });
        List<String> originals = webPods(ns).stream().map(p -> p.getMetadata().getName()).toList();
        assertThat(webPods(ns).stream().map(p -> p.getSpec().getNodeName()).toList()).as("where the web pods run").containsOnly(node);
        schedulable.forEach(w -> bed.tool("kubectl", "uncordon", w));

        // The leader is the chart's pod on the real node, the node this upgrade drains.
        String operatorPod = client.leases().inNamespace(operatorNamespace).withName("cks-node-operator-leader").get().getSpec().getHolderIdentity();
        assertThat(client.pods().inNamespace(operatorNamespace).withName(operatorPod).get().getSpec().getNodeName()).isEqualTo(node);
        Sampler sampler = new Sampler(ns);
        Thread sampling = new Thread(sampler, "realnode-sampler");
        try (OperatorProcess standby = OperatorProcess.start(bed, bed.kubeconfigForServiceAccount(operatorNamespace, fullname),
                "real-standby", standbyProperties())) {
            sampling.start();
            client.resource(nodeUpgrade(node, target)).create();
            Awaitility.await("NodeUpgrade real-node-upgrade finished").atMost(Duration.ofMinutes(8)).pollInterval(Duration.ofSeconds(2))
                    .until(() -> {
                        NodeUpgrade current = client.resources(NodeUpgrade.class).withName("real-node-upgrade").get();
                        return current.getStatus() != null && (current.getStatus().getPhase() == NodeUpgradeStatus.Phase.Succeeded
                                || current.getStatus().getPhase() == NodeUpgradeStatus.Phase.Failed);
                    });
            NodeUpgrade finished = client.resources(NodeUpgrade.class).withName("real-node-upgrade").get();
            assertThat(finished.getStatus().getPhase()).as("%s", finished.getStatus().getMessage()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
            sampler.stop.set(true);
            sampling.join();

            Node upgraded = client.nodes().withName(node).get();
            assertThat(upgraded.getStatus().getNodeInfo().getKubeletVersion()).isEqualTo(target);
            assertThat(upgraded.getSpec().getUnschedulable()).as("uncordoned").isNotEqualTo(Boolean.TRUE);
            assertThat(sampler.leaseHolders).as("the standby took the Lease over from the evicted pod %s", operatorPod)
                    .contains(operatorPod, "real-standby");
            assertThat(sampler.samples.get()).as("samples taken").isGreaterThan(20);
            assertThat(sampler.minAvailable.get()).as("Ready, not terminating web pods at every sample (PDB minAvailable %d)", MIN_AVAILABLE)
                    .isGreaterThanOrEqualTo(MIN_AVAILABLE);
            assertThat(sampler.terminating.keySet()).as("every original web pod was evicted").containsAll(originals);
            List<String> log = Files.readAllLines(events.resolve("events"));
            for (String pod : originals) {
                int preStop = log.indexOf("prestop " + pod);
                int term = log.indexOf("term " + pod);
                assertThat(preStop).as("%s ran its preStop hook (%s)", pod, log).isGreaterThanOrEqualTo(0);
                assertThat(term).as("%s got SIGTERM after its preStop hook and exited by itself", pod).isGreaterThan(preStop);
            }
            // The budget allows one disruption at a time: each later eviction of a web pod waited for a
            // replacement to be Ready. Seen in the same sample counts: the drain watches the budget and evicts
            // as soon as it allows, so a replacement's Ready and the next eviction often fall within one 100 ms
            // sample (a run of 2026-12-02 failed on exactly that with "before").
            List<Instant> evictions = originals.stream().map(sampler.terminating::get).sorted().toList();
            for (int i = 1; i < evictions.size(); i++) {
                Instant eviction = evictions.get(i);
                long readyReplacements = sampler.ready.entrySet().stream()
                        .filter(e -> !originals.contains(e.getKey()) && !e.getValue().isAfter(eviction)).count();
                assertThat(readyReplacements).as("replacements Ready before eviction %d", i + 1).isGreaterThanOrEqualTo(i);
            }
        } finally {
            sampler.stop.set(true);
            client.resources(NodeUpgrade.class).withName("real-node-upgrade").delete();
            client.namespaces().withName(ns).delete();
        }
    }

    private Map<String, String> standbyProperties() {
        Deployment deployment = client.apps().deployments().inNamespace(operatorNamespace).withName(fullname).get();
        Map<String, String> env = new HashMap<>();
        for (EnvVar var : deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv()) {
            if (var.getValue() != null) {
                env.put(var.getName(), var.getValue());
            }
        }
        Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
        properties.put("cks.namespace", operatorNamespace);
        properties.put("cks.leader-election.identity", "real-standby");
        properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
        properties.put("cks.upgrade.job-image", env.get("CKS_UPGRADE_JOB_IMAGE"));
        properties.put("cks.upgrade.script-sha256", env.get("CKS_UPGRADE_SCRIPT_SHA256"));
        properties.put("cks.audit.enabled", "false");
        return properties;
    }

    private NodeUpgrade nodeUpgrade(String node, String target) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName("real-node-upgrade");
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(target);
        spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", node)));
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.Script);
        UpgradeExecutor.Script script = new UpgradeExecutor.Script();
        UpgradeExecutor.ConfigMapKeyRef ref = new UpgradeExecutor.ConfigMapKeyRef();
        ref.setName(fullname + "-upgrade-scripts");
        ref.setKey(SCRIPT_KEY);
        script.setConfigMapRef(ref);
        executor.setScript(script);
        spec.setExecutor(executor);
        spec.setReadyTimeoutSeconds(300);
        spec.getDrain().setTimeoutSeconds(300);
        upgrade.setSpec(spec);
        return upgrade;
    }

    private List<Pod> webPods(String ns) {
        return client.pods().inNamespace(ns).withLabel("app", "web").list().getItems();
    }

    /** Samples the web pods and the Lease every 100 ms: the fewest available, when each pod turned Ready or started terminating. */
    private final class Sampler implements Runnable {
        final String ns;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger samples = new AtomicInteger();
        final AtomicInteger minAvailable = new AtomicInteger(Integer.MAX_VALUE);
        final Map<String, Instant> ready = new ConcurrentHashMap<>();
        final Map<String, Instant> terminating = new ConcurrentHashMap<>();
        final Set<String> leaseHolders = ConcurrentHashMap.newKeySet();

        Sampler(String ns) {
            this.ns = ns;
        }

        @Override
        public void run() {
            while (!stop.get()) {
                try {
                    Instant now = Instant.now();
                    int available = 0;
                    for (Pod pod : webPods(ns)) {
                        String name = pod.getMetadata().getName();
                        boolean isReady = pod.getStatus() != null && pod.getStatus().getConditions() != null && pod.getStatus().getConditions()
                                .stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
                        if (pod.getMetadata().getDeletionTimestamp() != null) {
                            terminating.putIfAbsent(name, now);
                        } else if (isReady) {
                            ready.putIfAbsent(name, now);
                            available++;
                        }
                    }
                    minAvailable.accumulateAndGet(available, Math::min);
                    var lease = client.leases().inNamespace(operatorNamespace).withName("cks-node-operator-leader").get();
                    if (lease != null && lease.getSpec().getHolderIdentity() != null) {
                        leaseHolders.add(lease.getSpec().getHolderIdentity());
                    }
                    samples.incrementAndGet();
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // An API hiccup loses one sample, not the test.
                }
            }
        }
    }
}
