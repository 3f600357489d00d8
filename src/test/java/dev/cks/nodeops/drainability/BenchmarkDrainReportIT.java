package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import dev.cks.nodeops.upgrade.ScaleBed;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * What a DrainReport costs at 1,000 KWOK workers with 10 pods each (10,000 pods of 50 workloads, each under a
 * PodDisruptionBudget that lets 10 % of them go (minAvailable 180 of 200), the first's none; a node holds 10 pods of one workload, so the
 * 20 nodes of the first are blocked), on the real
 * control plane with the packaged operator as its own process, run with the image's JVM options under the chart's default
 * memory limit; no other actor but KWOK and the disruption controller. Pods are bound by name (no
 * scheduler round-trip) and owned by a ConfigMap marked their controller: the drain's filters then count them as
 * replicated, the garbage collector keeps them, and no controller replaces them. Records per pass the API requests,
 * the pass's duration, the operator's CPU time and its RSS into target/benchmark-drain-report.md (docs/benchmarks.md,
 * "DrainReport at 1,000 nodes"). Out of the default run ({@code Benchmark*IT}); run with
 * {@code -Dit.test=BenchmarkDrainReportIT}.
 */
@ExtendWith(TestBedExtension.class)
class BenchmarkDrainReportIT {
    private static final int NODES = Integer.getInteger("benchmark.nodes", 1000);
    private static final int PODS_PER_NODE = Integer.getInteger("benchmark.podsPerNode", 10);
    private static final int WORKLOADS = 50;
    private static final int PASSES = 3;
    private static final int INTERVAL_SECONDS = 30;
    private static final String REPORT = "drr-bench";

    private KubernetesClient client;
    private String namespace;
    private List<String> nodes = List.of();
    private OperatorProcess operator;

    @AfterEach
    void tearDown() {
        if (operator != null) {
            operator.close();
        }
        client.resources(DrainReport.class).withName(REPORT).delete();
        client.namespaces().withName(namespace).delete();
        nodes.forEach(n -> client.nodes().withName(n).delete());
    }

    @Test
    void aPassOverAThousandNodesCostsAFewListsAndBoundedTime(TestBed bed) throws Exception {
        client = bed.client();
        namespace = bed.newNamespace("drr-bench");
        ScaleBed scale = new ScaleBed(bed);
        String pool = namespace;
        Instant setUp = Instant.now();
        nodes = scale.createNodes(NODES, TestBed.NODE_VERSION, Map.of(ScaleBed.POOL, pool));
        scale.awaitReady(nodes);
        List<String> owners = new ArrayList<>();
        for (int w = 0; w < WORKLOADS; w++) {
            ConfigMap owner = client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder()
                    .withNewMetadata().withName("app-" + w).endMetadata().build()).create();
            owners.add(owner.getMetadata().getUid());
            PodDisruptionBudgetBuilder budget = new PodDisruptionBudgetBuilder().withNewMetadata().withName("app-" + w).endMetadata()
                    .withNewSpec().withNewSelector().addToMatchLabels("app", "app-" + w).endSelector().endSpec();
            // A number, not a percentage: the disruption controller scales a percentage by the owner's scale subresource,
            // which a ConfigMap has not. 90 % of the workload's pods stay: 10 % may go, as with maxUnavailable 10 %.
            int pods = NODES * PODS_PER_NODE / WORKLOADS;
            budget.editSpec().withMinAvailable(new IntOrString(w == 0 ? pods : pods - pods / 10)).endSpec();
            client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(budget.build()).create();
        }
        bindPods(owners);
        // Until the disruption controller counts every pod healthy: budgets it has not computed allow nothing.
        Awaitility.await("every budget counts its pods healthy").atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(3))
                .until(() -> client.policy().v1().podDisruptionBudget().inNamespace(namespace).list().getItems().stream()
                        .allMatch(b -> b.getStatus() != null && b.getStatus().getCurrentHealthy() != null
                                && b.getStatus().getCurrentHealthy() == NODES * PODS_PER_NODE / WORKLOADS));
        Duration setUpTook = Duration.between(setUp, Instant.now());

        // As the image runs it under the chart's default memory limit, or another (-Dbenchmark.memoryLimitMiB=1024).
        List<String> jvm = new ArrayList<>(OperatorProcess.imageJvmOptions(bed));
        if (System.getProperty("benchmark.memoryLimitMiB") != null) {
            jvm.replaceAll(option -> option.startsWith("-XX:MaxRAM=") ? "-XX:MaxRAM=" + System.getProperty("benchmark.memoryLimitMiB") + "m" : option);
        }
        operator = OperatorProcess.start(bed, bed.operatorKubeconfig(Map.of()), "drainreport-bench", Map.of(), jvm);
        Thread.sleep(10_000); // the start-up's own CPU and allocation settle before the baseline
        long rssBeforeKib = operator.procStatus().get("VmRSS");
        DrainReport report = new DrainReport();
        report.setMetadata(new ObjectMetaBuilder().withName(REPORT).build());
        DrainReportSpec spec = new DrainReportSpec();
        spec.setSelector(new LabelSelector(null, Map.of(ScaleBed.POOL, pool)));
        spec.setIntervalSeconds(INTERVAL_SECONDS);
        report.setSpec(spec);
        client.resource(report).create();

        StringBuilder rows = new StringBuilder("| pass | duration (ms) | API requests | pods read | blocked | drainable | operator CPU since the last pass (s) | RSS after (MiB) |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        Instant lastStart = Instant.EPOCH;
        double cpuBefore = operator.cpuSeconds();
        List<DrainReportStatus> passes = new ArrayList<>();
        for (int pass = 1; pass <= PASSES + 1; pass++) {
            Instant after = lastStart;
            Awaitility.await("pass " + pass).atMost(Duration.ofSeconds(INTERVAL_SECONDS * 4L)).pollInterval(Duration.ofMillis(500)).until(() -> {
                DrainReportStatus status = status();
                return status != null && status.getLastRun() != null && Timestamps.parse(status.getLastRun().getStartedAt()).isAfter(after);
            });
            DrainReportStatus status = status();
            passes.add(status);
            lastStart = Timestamps.parse(status.getLastRun().getStartedAt());
            double cpuNow = operator.cpuSeconds();
            rows.append("| ").append(pass).append(" | ").append(status.getLastRun().getDurationMillis()).append(" | ")
                    .append(status.getLastRun().getApiRequests()).append(" | ").append(status.getLastRun().getPods()).append(" | ")
                    .append(status.getBlockedCount()).append(" | ").append(status.getDrainableCount()).append(" | ")
                    .append(String.format("%.1f", cpuNow - cpuBefore)).append(" | ").append(operator.procStatus().get("VmRSS") / 1024).append(" |\n");
            cpuBefore = cpuNow;
        }
        String served = client.resources(DrainReport.class).withName(REPORT).get() == null ? ""
                : client.getKubernetesSerialization().asJson(client.resources(DrainReport.class).withName(REPORT).get());
        java.util.Map<Drainability.Cause, Long> causes = passes.get(passes.size() - 1).getBlockedNodes().stream()
                .flatMap(n -> n.getCauses().stream()).collect(java.util.stream.Collectors.groupingBy(c -> c, java.util.TreeMap::new,
                        java.util.stream.Collectors.counting()));
        String result = NODES + " nodes × " + PODS_PER_NODE + " pods (set up in " + setUpTook.toSeconds() + " s); JVM options "
                + jvm + "; causes of the listed blocked nodes " + causes + "; operator RSS before the report "
                + rssBeforeKib / 1024 + " MiB, peak (VmHWM) " + operator.procStatus().get("VmHWM") / 1024 + " MiB; the report's object "
                + served.length() + " bytes as JSON\n\n" + rows;
        Path out = bed.projectRoot().resolve("target/benchmark-drain-report.md");
        Files.writeString(out, result);
        System.out.println("[benchmark] drain report (" + out + "):\n" + result);

        DrainReportStatus last = passes.get(passes.size() - 1);
        assertThat(last.getNodeCount()).isEqualTo(NODES);
        assertThat(last.getBlockedCount()).as("the nodes of the workload whose budget allows no disruption").isEqualTo(NODES / WORKLOADS);
        assertThat(last.getLastRun().getApiRequests()).as("paged lists only: nodes, pods and budgets in pages of 500")
                .isLessThanOrEqualTo(NODES / 500 + 1 + NODES * PODS_PER_NODE / 500 + 1 + 1 + 2);
    }

    /** Pods bound to the nodes in turn, each of workload app-(i mod 50), owned by that workload's ConfigMap as its controller. */
    private void bindPods(List<String> owners) throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> created = new ArrayList<>();
            for (int i = 0; i < NODES * PODS_PER_NODE; i++) {
                int w = i % WORKLOADS;
                Pod pod = new PodBuilder().withNewMetadata().withName("p-" + i).addToLabels("app", "app-" + w)
                        .addNewOwnerReference().withApiVersion("v1").withKind("ConfigMap").withName("app-" + w).withUid(owners.get(w))
                        .withController(true).endOwnerReference().endMetadata()
                        .withNewSpec().withNodeName(nodes.get(i % nodes.size())).withTerminationGracePeriodSeconds(1L)
                        .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec().build();
                created.add(threads.submit(() -> ScaleBed.withRetries(() -> client.pods().inNamespace(namespace).resource(pod).create())));
            }
            for (Future<?> f : created) {
                f.get();
            }
        } finally {
            threads.shutdown();
        }
    }

    private DrainReportStatus status() {
        DrainReport report = client.resources(DrainReport.class).withName(REPORT).get();
        return report == null ? null : report.getStatus();
    }
}
