package dev.cks.nodeops.drain;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.drain.BenchmarkDrainIT.Run;
import dev.cks.nodeops.realnode.RealPods;
import dev.cks.nodeops.testbed.RealNodeExtension;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * A benchmark, not a test: BenchmarkDrainIT's comparison on real pods. The real node holds 10 pods
 * (2 Deployments of 5, 10 s grace, a 2 s preStop hook, a readiness probe, one PDB each with
 * maxUnavailable 1); ours and `kubectl drain` drain it in turn, the same pods coming back to it before
 * each run. Writes target/benchmark-drain-real.md. Run it alone (see docs/benchmarks.md):
 * `TESTBED_CLUSTER=realnode ./mvnw -B verify -Preal-node -Dit.test=BenchmarkDrainRealIT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false`.
 */
@ExtendWith(RealNodeExtension.class)
class BenchmarkDrainRealIT {
    private static final int DEPLOYMENTS = 2;
    private static final int REPLICAS = 5;
    private static final String SCENARIO = "real pods, PDB maxUnavailable 1";

    @Test
    void realPodsOursVersusKubectlDrain(TestBed bed) throws Exception {
        int runs = Integer.getInteger("benchmark.runs", 3);
        KubernetesClient client = bed.client();
        String node = bed.realNode("node");
        // Every KWOK worker takes the replacements (and none of the pods while they come back).
        List<String> workers = client.nodes().withLabel("type", "kwok").list().getItems().stream().map(n -> n.getMetadata().getName()).toList();
        String ns = "realbench";
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).serverSideApply();
        Path events = bed.projectRoot().resolve("target/realnode-benchmark-events");
        Files.createDirectories(events);
        workers.forEach(w -> schedulable(client, w, false));
        for (int i = 0; i < DEPLOYMENTS; i++) {
            client.apps().deployments().inNamespace(ns).resource(RealPods.graceful("app" + i, REPLICAS, bed.realNode("shellImage"), events, 10, 2))
                    .serverSideApply();
            client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(new PodDisruptionBudgetBuilder()
                    .withNewMetadata().withName("app" + i).endMetadata()
                    .withNewSpec().withMaxUnavailable(new IntOrString(1)).withNewSelector().addToMatchLabels("app", "app" + i).endSelector().endSpec()
                    .build()).serverSideApply();
        }
        String load = Files.readString(Path.of("/proc/loadavg")).strip();
        List<Run> results = new ArrayList<>();
        for (int run = 0; run < 2 * runs; run++) {
            bringBack(client, ns, node, workers);
            Run result = run % 2 == 0 ? BenchmarkDrainIT.ours(bed, node, SCENARIO) : BenchmarkDrainIT.kubectl(bed, node, SCENARIO);
            System.out.printf(Locale.ROOT, "[benchmark] %-7s %-32s %6.1f s %5d requests%n", result.tool(), SCENARIO, result.seconds(), result.requests());
            results.add(result);
        }
        bringBack(client, ns, node, workers);
        client.namespaces().withName(ns).delete();
        String report = BenchmarkDrainIT.report(results, runs) + "\nLoad average (1/5/15 min) before the runs: " + load
                + "; after: " + Files.readString(Path.of("/proc/loadavg")).strip() + "\n";
        System.out.println(report);
        Files.writeString(bed.projectRoot().resolve("target/benchmark-drain-real.md"), report);
    }

    /** All pods Ready on the real node again (the workers cordoned meanwhile), then the workers schedulable for the next drain. */
    private static void bringBack(KubernetesClient client, String ns, String node, List<String> workers) {
        workers.forEach(w -> schedulable(client, w, false));
        schedulable(client, node, true);
        for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
            if (!node.equals(pod.getSpec().getNodeName())) {
                client.pods().inNamespace(ns).resource(pod).delete();
            }
        }
        Awaitility.await("all pods Ready on " + node).atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> {
                    List<Pod> pods = client.pods().inNamespace(ns).list().getItems();
                    return pods.size() == DEPLOYMENTS * REPLICAS && pods.stream().allMatch(p -> node.equals(p.getSpec().getNodeName())
                            && p.getMetadata().getDeletionTimestamp() == null && TestPods.isReady(p));
                });
        for (int i = 0; i < DEPLOYMENTS; i++) {
            String name = "app" + i;
            Awaitility.await("PDB " + name).atMost(Duration.ofMinutes(1)).until(() -> {
                var pdb = client.policy().v1().podDisruptionBudget().inNamespace(ns).withName(name).get();
                return pdb.getStatus() != null && Integer.valueOf(REPLICAS).equals(pdb.getStatus().getCurrentHealthy());
            });
        }
        workers.forEach(w -> schedulable(client, w, true));
    }

    private static void schedulable(KubernetesClient client, String node, boolean schedulable) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), schedulable
                ? "{\"metadata\":{\"annotations\":{\"nodeops.cks.dev/cordoned-by\":null}},\"spec\":{\"unschedulable\":null}}"
                : "{\"spec\":{\"unschedulable\":true}}");
    }
}
