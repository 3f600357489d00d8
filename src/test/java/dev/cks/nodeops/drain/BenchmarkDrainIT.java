package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.drain.DrainResult.Outcome;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * A benchmark, not a test: drains a node with 100 pods with our engine and with `kubectl drain
 * --ignore-daemonsets --delete-emptydir-data`, alternating, on the same bed with the same pods, and
 * writes target/benchmark-drain.md. Excluded from the default failsafe run (see the pom); run it with
 * `TESTBED_CLUSTER=cksbench ./mvnw -B verify -Dit.test=BenchmarkDrainIT -Dtest=skip -Dsurefire.failIfNoSpecifiedTests=false`.
 * Optional: -Dbenchmark.runs=N (default 5 per tool and scenario).
 */
@ExtendWith(TestBedExtension.class)
class BenchmarkDrainIT {
    private static final int DEPLOYMENTS = 5;
    private static final int REPLICAS = 20;
    private static final int PODS = DEPLOYMENTS * REPLICAS;

    record Run(String tool, String scenario, double seconds, int requests, int evictions) {
    }

    @Test
    void hundredPodsOursVersusKubectlDrain(TestBed testBed) throws Exception {
        int runs = Integer.getInteger("benchmark.runs", 5);
        List<Run> results = new ArrayList<>();
        for (String scenario : List.of("no PDB", "PDB maxUnavailable 10%")) {
            DrainBed bed = new DrainBed(testBed, "bench");
            try {
                String a = bed.addWorker();
                String b = bed.addWorker();
                // Cordoned before the pods exist, so all of them start on a.
                bed.cordon(b);
                for (int i = 0; i < DEPLOYMENTS; i++) {
                    bed.deployment("app" + i, REPLICAS, i % 2 == 0);
                    if (!scenario.equals("no PDB")) {
                        bed.budget("app" + i + "-pdb", "app" + i, null, "10%");
                    }
                }
                bed.daemonSet("agent");
                String full = a;
                String empty = b;
                for (int run = 0; run < 2 * runs; run++) {
                    prepare(bed, full, empty, !scenario.equals("no PDB"));
                    Run result = run % 2 == 0 ? ours(testBed, full, scenario) : kubectl(testBed, full, scenario);
                    System.out.printf(Locale.ROOT, "[benchmark] %-7s %-24s %6.1f s %5d requests%n", result.tool(), scenario, result.seconds(), result.requests());
                    results.add(result);
                    String drained = full;
                    full = empty;
                    empty = drained;
                }
            } finally {
                bed.cleanUp();
            }
        }
        String report = report(results, runs);
        System.out.println(report);
        Files.writeString(testBed.projectRoot().resolve("target/benchmark-drain.md"), report);
    }

    /**
     * All pods Ready on `full` while `empty` (the node drained last, still cordoned) takes none; then
     * `empty` is made schedulable so that the next drain has somewhere to put the replacements.
     */
    private static void prepare(DrainBed bed, String full, String empty, boolean budgets) {
        Awaitility.await("all " + PODS + " pods Ready on " + full).atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(1))
                .until(() -> bed.podsOn(full).stream().filter(p -> !"agent".equals(p.getMetadata().getLabels().get("app")))
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null).filter(TestPods::isReady).count() == PODS
                        && bed.podsOn(empty).stream().allMatch(p -> "agent".equals(p.getMetadata().getLabels().get("app"))));
        if (budgets) {
            for (int i = 0; i < DEPLOYMENTS; i++) {
                bed.awaitBudget("app" + i + "-pdb", REPLICAS, REPLICAS);
            }
        }
        bed.client.nodes().withName(empty).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"nodeops.cks.dev/cordoned-by\":null}},\"spec\":{\"unschedulable\":null}}");
    }

    static Run ours(TestBed testBed, String node, String scenario) throws Exception {
        AtomicInteger requests = new AtomicInteger();
        AtomicInteger evictions = new AtomicInteger();
        try (KubernetesClient client = DrainBed.observedClient(testBed.client(), request -> {
            requests.incrementAndGet();
            if (request.uri().getPath().endsWith("/eviction")) {
                evictions.incrementAndGet();
            }
        })) {
            client.getKubernetesVersion();
            requests.set(0);
            long started = System.nanoTime();
            new Cordon(client).cordon(node, "Benchmark/drain");
            DrainOptions options = new DrainOptions();
            // As the operator drains: the node's pods and budgets watched (their lists and watch requests
            // are counted), a step whenever the watches wake it or its fallback look is due, done only
            // when a list of the node's pods confirms it.
            DrainWatches watches = new DrainWatches(client);
            DrainResult result = new WokenSteps().toEnd(new NodeDrainer(client, EvictionListener.NONE, watches), node, options, new DrainState(),
                    Duration.ofMinutes(5));
            double seconds = (System.nanoTime() - started) / 1e9;
            assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
            assertThat(watches.watching()).as("the drain's watches stopped").isEmpty();
            return new Run("ours", scenario, seconds, requests.get(), evictions.get());
        }
    }

    static Run kubectl(TestBed testBed, String node, String scenario) throws IOException, InterruptedException {
        Process bin = new ProcessBuilder("bash", "hack/testbed.sh", "bin").directory(testBed.projectRoot().toFile()).start();
        Path kubectl = Path.of(new String(bin.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip(), "kubectl");
        bin.waitFor();
        Path log = Files.createTempFile("kubectl-drain", ".log");
        long started = System.nanoTime();
        Process process = new ProcessBuilder(kubectl.toString(), "--kubeconfig", testBed.kubeconfig().toString(), "drain", node,
                "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=600s", "-v=6")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(process.waitFor(11, TimeUnit.MINUTES)).isTrue();
        double seconds = (System.nanoTime() - started) / 1e9;
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()))).isZero();
        // -v=6 logs one "Response" line per HTTP request kubectl makes.
        int requests = (int) lines.stream().filter(l -> l.contains("\"Response\" verb=")).count();
        int evictions = (int) lines.stream().filter(l -> l.contains("\"Response\" verb=\"POST\"") && l.contains("/eviction")).count();
        Files.delete(log);
        return new Run("kubectl", scenario, seconds, requests, evictions);
    }

    static String report(List<Run> results, int runs) {
        StringBuilder out = new StringBuilder();
        out.append("| scenario | tool | runs | median wall time (s) | min–max (s) | median API requests | median eviction POSTs |\n");
        out.append("|---|---|---|---|---|---|---|\n");
        for (String scenario : results.stream().map(Run::scenario).distinct().toList()) {
            double oursMedian = 0;
            double kubectlMedian = 0;
            for (String tool : List.of("ours", "kubectl")) {
                List<Run> mine = results.stream().filter(r -> r.scenario().equals(scenario) && r.tool().equals(tool)).toList();
                double median = median(mine.stream().map(Run::seconds).toList());
                if (tool.equals("ours")) {
                    oursMedian = median;
                } else {
                    kubectlMedian = median;
                }
                out.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.1f–%.1f | %.0f | %.0f |%n", scenario, tool, mine.size(), median,
                        mine.stream().mapToDouble(Run::seconds).min().orElse(0), mine.stream().mapToDouble(Run::seconds).max().orElse(0),
                        median(mine.stream().map(r -> (double) r.requests()).toList()), median(mine.stream().map(r -> (double) r.evictions()).toList())));
            }
            out.append(String.format(Locale.ROOT, "| %s | ratio ours/kubectl | | %.2f | | | |%n", scenario, oursMedian / kubectlMedian));
        }
        out.append("\nRuns in order: ");
        out.append(String.join(", ", results.stream().map(r -> String.format(Locale.ROOT, "%s/%s %.1fs %dreq", r.tool(), r.scenario(), r.seconds(), r.requests())).toList()));
        out.append("\n");
        return out.toString();
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n == 0 ? 0 : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
