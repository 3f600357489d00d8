package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.testing.FakeNodeWork;
import dev.cks.nodeops.testing.KubectlJson;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingStatusStore;
import dev.cks.nodeops.testing.SimulatedCloudStack;
import dev.cks.nodeops.testing.StatusBound;
import dev.cks.nodeops.testing.TestNodes;
import dev.cks.nodeops.testing.TestSettings;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * How big a NodeUpgrade's status grows over 1,000 dense workers, without a cluster: nodes in {@link FakeNodeWork}
 * whose drains evict 110 pods of 22 Deployments each (in two steps, as a drain waiting for a budget does), Jobs
 * in {@link FakeUpgradeJobs}; the other actor is the kubelet, which the test plays (a succeeded Job brings its
 * node back Ready at the target). maxUnavailable 10 (as the scale benchmark). The object is measured after every
 * reconcile, from the first to the last, as the API server serializes it ({@link StatusBound}); what
 * {@code kubectl get nu -o json} prints of it (Go's four-space indentation, ~1.8 times as much) is printed beside.
 */
class NodeUpgradeStatusSizeTest {
    private static final String FROM = "v1.34.2";
    private static final String TARGET = "v1.35.4";
    private static final String CONTROL = "prod-control-a1";
    private static final int WORKERS = 1000;
    private static final int PODS_PER_NODE = 110;
    private static final int WORKLOADS_PER_NODE = 22;
    private static final int MAX_UNAVAILABLE = 10;
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade \"$2\"\n";

    private final ManualTime clock = new ManualTime(Instant.parse("2026-11-30T12:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SimulatedCloudStack cloudStack = new SimulatedCloudStack(clock, registry);
    private final FakeNodeWork nodes = new FakeNodeWork();
    private final FakeUpgradeJobs jobs = new FakeUpgradeJobs();
    private final RecordingEvents events = new RecordingEvents();
    private final TestSettings settings = new TestSettings();
    private final List<String> workers = new ArrayList<>();

    @AfterEach
    void stopSimulator() {
        cloudStack.close();
    }

    @Test
    void statusOfAThousandDenseWorkersStaysWithinItsBoundThroughout() {
        CloudStackSimulator simulator = cloudStack.simulator;
        SimulatedCluster cluster = simulator.addCluster("prod", Owner.of(simulator.defaultAccount()), "CloudManaged",
                simulator.addSupportedVersion(TARGET.substring(1)).id());
        simulator.addClusterVm(cluster, CONTROL, NodeRole.CONTROL);
        // The control plane is at the target already: the upgrade is of the workers alone.
        nodes.add(TestNodes.node(CONTROL).controlPlane().version(TARGET).created("2025-06-01T00:00:00Z").build());
        for (int i = 0; i < WORKERS; i++) {
            String worker = String.format("prod-node-%010x", 0x3a7f000000L + i * 7919L);
            workers.add(worker);
            simulator.addClusterVm(cluster, worker, NodeRole.WORKER);
            nodes.add(TestNodes.node(worker).version(FROM).label("pool", "dense").build());
            // Half the pods in one step while a budget holds the rest, the rest in the next: each evicted pod recorded.
            nodes.thenDrain(worker, (state, now) -> FakeNodeWork.moving(evict(state, worker, 0, PODS_PER_NODE / 2), now.plusSeconds(1), PODS_PER_NODE / 2))
                    .thenDrain(worker, (state, now) -> FakeNodeWork.done(evict(state, worker, PODS_PER_NODE / 2, PODS_PER_NODE)));
        }
        jobs.configMaps.put("upgrade", Map.of("upgrade.sh", SCRIPT));
        settings.scriptSha256.add(ScriptTrust.sha256(SCRIPT));
        NodeUpgradeReconciler reconciler = new NodeUpgradeReconciler(clock, settings, cloudStack.access(cluster.id()),
                new OperationPorts(nodes, new OperationRecorder(NodeUpgradeReconciler.KIND, events, new OperationMetrics(registry)),
                        new RecordingStatusStore()), jobs, () -> List.of(TARGET));
        NodeUpgrade upgrade = upgrade();

        int largest = 0;
        int largestPrinted = 0;
        String largestAt = "";
        int reconciles = 0;
        while (upgrade.getStatus() == null || !upgrade.getStatus().finished()) {
            UpdateControl<NodeUpgrade> control = reconciler.reconcile(upgrade, null);
            reconciles++;
            int size = Serialization.asJson(upgrade).getBytes(StandardCharsets.UTF_8).length;
            largestPrinted = Math.max(largestPrinted, KubectlJson.size(upgrade));
            if (size > largest) {
                largest = size;
                largestAt = "reconcile " + reconciles + " (progress " + upgrade.getStatus().getProgress() + ")";
            }
            assertThat(reconciles).as("reconciles of the upgrade of %d workers: %s", WORKERS, upgrade.getStatus().getMessage()).isLessThan(5000);
            clock.advance(control.getScheduleDelay().map(Duration::ofMillis).orElse(Duration.ofSeconds(1)));
            playKubelets();
        }

        System.out.printf("[status size] %d workers x %d pods: largest %d bytes at %s (as kubectl prints it %d), at the end %d (%d), %d reconciles%n",
                WORKERS, PODS_PER_NODE, largest, largestAt, largestPrinted, Serialization.asJson(upgrade).getBytes(StandardCharsets.UTF_8).length,
                KubectlJson.size(upgrade), reconciles);
        assertThat(upgrade.getStatus().getPhase()).as(upgrade.getStatus().getMessage()).isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
        assertThat(upgrade.getStatus().getNodes()).hasSize(WORKERS);
        assertThat(largest).as("the largest NodeUpgrade as the API server would serialize it, at %s", largestAt)
                .isLessThanOrEqualTo(StatusBound.of(WORKERS, MAX_UNAVAILABLE, PODS_PER_NODE));
        assertThat(Serialization.asJson(upgrade).getBytes(StandardCharsets.UTF_8).length).as("the NodeUpgrade once every node is done with")
                .isLessThanOrEqualTo(StatusBound.settled(WORKERS));
        // What users still read: how many pods each drain evicted, the last few by name, the workloads in the NodeDrained event.
        DrainState drain = upgrade.getStatus().getNodes().get(WORKERS - 1).getDrain();
        assertThat(drain.getPodsEvicted()).isEqualTo(PODS_PER_NODE);
        assertThat(drain.getPodsSeen()).isEmpty();
        assertThat(drain.getWorkloads()).isEmpty();
        assertThat(events.all().stream().map(RecordingEvents.RecordedEvent::message)).contains("Drained node " + workers.get(WORKERS - 1) + ": "
                + PODS_PER_NODE + " pod(s) evicted, of Deployment production-shop/shop-0, Deployment production-shop/shop-1, Deployment production-shop/shop-2, "
                + "Deployment production-shop/shop-3, Deployment production-shop/shop-4, Deployment production-shop/shop-5, "
                + "Deployment production-shop/shop-6, Deployment production-shop/shop-7, Deployment production-shop/shop-8, "
                + "Deployment production-shop/shop-9, Deployment production-shop/shop-10, Deployment production-shop/shop-11, "
                + "Deployment production-shop/shop-12, Deployment production-shop/shop-13, Deployment production-shop/shop-14, "
                + "Deployment production-shop/shop-15, Deployment production-shop/shop-16, Deployment production-shop/shop-17, "
                + "Deployment production-shop/shop-18, Deployment production-shop/shop-19, Deployment production-shop/shop-20, "
                + "Deployment production-shop/shop-21.");
    }

    /**
     * Records pods [from, to) of the node as evicted, as {@code NodeDrainer} does: their uids while they are leaving
     * (all of them, the worst case: none has gone yet), the count, the last names, and their Deployments.
     */
    private static DrainState evict(DrainState state, String node, int from, int to) {
        for (int i = from; i < to; i++) {
            String app = "shop-" + (i % WORKLOADS_PER_NODE);
            String pod = app + "-7d9f8b6c5d-" + node.substring(node.length() - 5) + i;
            state.getPodsSeen().add(java.util.UUID.nameUUIDFromBytes(pod.getBytes()).toString());
            state.setPodsEvicted(i + 1);
            state.getLastEvicted().add("production-shop/" + pod);
            if (!state.getWorkloads().contains("Deployment production-shop/" + app)) {
                state.getWorkloads().add("Deployment production-shop/" + app);
            }
        }
        state.getLastEvicted().subList(0, state.getLastEvicted().size() - DrainState.LAST_NAMES).clear();
        return state;
    }

    private NodeUpgrade upgrade() {
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion(TARGET);
        spec.setSelector(new LabelSelector(null, Map.of("pool", "dense")));
        spec.setExecutor(UpgradeBed.script("upgrade", "upgrade.sh"));
        spec.setMaxUnavailable(new IntOrString(MAX_UNAVAILABLE));
        spec.setTimeoutSeconds(86_400);
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.setMetadata(new ObjectMetaBuilder().withName("to-1-35").withGeneration(1L).withUid("uid-7").withAnnotations(new java.util.HashMap<>()).build());
        upgrade.setSpec(spec);
        return upgrade;
    }

    private void playKubelets() {
        jobs.jobs.values().stream().filter(job -> UpgradeJob.outcome(job) instanceof UpgradeJob.Running).toList().forEach(job -> {
            String node = job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE);
            jobs.finish(node, true);
            nodes.get(node).getStatus().getNodeInfo().setKubeletVersion(TARGET);
        });
    }
}
