package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testing.StatusBound;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * One NodeUpgrade of a pool of KWOK workers, each with pods bound to it that no controller manages (so a drain evicts
 * them all and nothing comes back: many pods per node without minutes of scheduling), its object read from the API
 * server every 2 s from creation to the end: as the API server serializes it (a GET of the object, what etcd
 * stores) and as {@code kubectl get nu NAME -o json} prints it (what {@code wc -c} counts). The other actor is the
 * kubelet, played by KWOK and {@code KubeletUpgradeSimulation} (a node comes back at the target when its Job succeeds).
 */
final class StatusSizeRun {
    private static final Duration EVERY = Duration.ofSeconds(2);

    /** One look at the object: its size both ways, its progress, and how many of its nodes were in progress. */
    record Sample(Instant at, int bytes, int printed, String progress, long inProgress) {
        @Override
        public String toString() {
            return bytes + " B (kubectl -o json " + printed + " B) at progress " + progress + ", " + inProgress + " node(s) in progress";
        }
    }

    record Result(int nodes, int podsPerNode, int maxUnavailable, List<Sample> samples, NodeUpgrade done, Duration wall, Duration bedTime) {
        Sample largest() {
            return samples.stream().max(Comparator.comparingInt(Sample::bytes)).orElseThrow();
        }

        Sample largestPrinted() {
            return samples.stream().max(Comparator.comparingInt(Sample::printed)).orElseThrow();
        }

        Sample last() {
            return samples.get(samples.size() - 1);
        }

        long samplesInProgress() {
            return samples.stream().filter(s -> s.inProgress() > 0).count();
        }

        /** What every run must show: it succeeded, was sampled mid-rollout, and no sample passed the bound ({@link StatusBound}). */
        void assertWithinBound() {
            assertThat(done.getStatus().getPhase()).as("the upgrade of %d nodes: %s", nodes, done.getStatus().getMessage())
                    .isEqualTo(NodeUpgradeStatus.Phase.Succeeded);
            assertThat(done.getStatus().getNodes()).hasSize(nodes)
                    .allSatisfy(n -> assertThat(n.getDrain().getPodsEvicted()).as("pods evicted from %s", n.getName()).isEqualTo(podsPerNode));
            assertThat(samplesInProgress()).as("samples taken while nodes were in progress (of %d)", samples.size()).isGreaterThanOrEqualTo(3);
            assertThat(largest().bytes()).as("the largest NodeUpgrade the API server served: %s", largest())
                    .isLessThanOrEqualTo(StatusBound.of(nodes, maxUnavailable, podsPerNode));
            assertThat(last().bytes()).as("the NodeUpgrade once every node is done with: %s", last()).isLessThanOrEqualTo(StatusBound.settled(nodes));
        }

        String report() {
            return String.format("%d nodes x %d pods, maxUnavailable %d: %s in %d s (bed ready in %d s), %d samples (%d with nodes in progress); "
                    + "largest %s; largest as kubectl prints it %s; at the end %s; bound %d B (settled %d B)", nodes, podsPerNode, maxUnavailable,
                    done.getStatus().getPhase(), wall.toSeconds(), bedTime.toSeconds(), samples.size(), samplesInProgress(), largest(), largestPrinted(),
                    last(), StatusBound.of(nodes, maxUnavailable, podsPerNode), StatusBound.settled(nodes));
        }
    }

    private StatusSizeRun() {
    }

    static Result run(TestBed bed, String tag, String scriptConfigMap, int nodes, int podsPerNode, int maxUnavailable, Duration atMost) throws Exception {
        KubernetesClient client = bed.client();
        ScaleBed scale = new ScaleBed(bed);
        String namespace = "size-" + tag;
        String name = "size-" + tag;
        Instant start = Instant.now();
        try {
            List<String> names = scale.createNodes(nodes, UpgradeBed.FROM, Map.of(ScaleBed.POOL, tag));
            scale.awaitReady(names);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).serverSideApply();
            scale.bindPods(namespace, "dense-", names, 0, nodes * podsPerNode);
            Awaitility.await(nodes * podsPerNode + " pods Running").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(3))
                    .until(() -> client.pods().inNamespace(namespace).list().getItems().stream()
                            .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())).count() == (long) nodes * podsPerNode);
            Duration bedTime = Duration.between(start, Instant.now());

            Instant created = Instant.now();
            // The pods have no controller: force lets the drain evict them (kubectl drain --force), and none comes back.
            scale.createUpgrade(name, tag, scriptConfigMap, maxUnavailable, 300, spec -> spec.getDrain().setForce(true));
            List<Sample> samples = new ArrayList<>();
            NodeUpgrade current = null;
            while (current == null || current.getStatus() == null || !current.getStatus().finished()) {
                assertThat(Duration.between(created, Instant.now())).as("the upgrade of %d nodes within %s; last: %s", nodes, atMost,
                        samples.isEmpty() ? "none" : samples.get(samples.size() - 1)).isLessThan(atMost);
                String served = client.raw("/apis/nodeops.cks.dev/v1alpha1/nodeupgrades/" + name);
                int printed = bed.tool("kubectl", "get", "nu", name, "-o", "json").getBytes(StandardCharsets.UTF_8).length;
                current = client.getKubernetesSerialization().unmarshal(served, NodeUpgrade.class);
                NodeUpgradeStatus status = current.getStatus();
                samples.add(new Sample(Instant.now(), served.getBytes(StandardCharsets.UTF_8).length, printed, status == null ? null : status.getProgress(),
                        status == null ? 0 : status.getNodes().stream().filter(UpgradeRollout::inProgress).count()));
                Thread.sleep(EVERY.toMillis());
            }
            return new Result(nodes, podsPerNode, maxUnavailable, samples, current, Duration.between(created, Instant.now()), bedTime);
        } finally {
            client.resources(NodeUpgrade.class).withName(name).delete();
            client.namespaces().withName(namespace).delete();
            client.nodes().withLabel(ScaleBed.POOL, tag).delete();
        }
    }
}
