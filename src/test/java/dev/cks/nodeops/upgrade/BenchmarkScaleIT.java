package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.audit.VMMapAuditStatus;
import dev.cks.nodeops.cloudstack.simulator.NodeRole;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The operator at 250, 500 and 1,000 nodes (docs/benchmarks.md, "Scale"): one bed grown size by size,
 * 10 pods per node, and at each size a fresh operator (the image's JVM options, the chart's memory
 * limit, the chart's ServiceAccount) measured in four phases:
 * <ol>
 * <li><b>idle</b>: no operation, nothing changes but KWOK's heartbeats;
 * <li><b>held, quiet</b> and <b>held, churn</b>: one NodeUpgrade holds one node and waits for its kubelet
 * (which {@link KubeletUpgradeSimulation} holds back), first while nothing else changes, then while the
 * harness cordons and uncordons 100 other nodes again and again — changes a NodeUpgrade acts on, on nodes
 * it does not hold: its reconciles must not rise;
 * <li><b>upgrade</b>: a NodeUpgrade of 50 workers (10 pods each, from Deployments with PDBs) with
 * maxUnavailable 10 and the Script executor, to the end, the held one still waiting beside it;
 * <li><b>audit</b>: one VMMapAudit run over 5,000 VMs served by the CloudStack simulator over HTTP.
 * </ol>
 * API requests are counted server-side (the bed's audit log, the operator's ServiceAccount), reconciles
 * from the operator's metrics (JOSDK's reconciliations_started_total) and, per operation, from JOSDK's
 * debug line for each reconcile; CPU and RSS from /proc; heap from the operator's metrics.
 * Out of the default run ({@code Benchmark*IT}); run with {@code -Dit.test=BenchmarkScaleIT}.
 */
@ExtendWith(TestBedExtension.class)
class BenchmarkScaleIT {
    private static final List<Integer> SIZES = Arrays.stream(System.getProperty("benchmark.nodes", "250,500,1000").split(","))
            .map(String::strip).map(Integer::parseInt).toList();
    private static final int PODS_PER_NODE = Integer.getInteger("benchmark.podsPerNode", 10);
    private static final int UPGRADED = Integer.getInteger("benchmark.upgradeWorkers", 50);
    private static final int MAX_UNAVAILABLE = Integer.getInteger("benchmark.maxUnavailable", 10);
    private static final int VMS = Integer.getInteger("benchmark.vms", 5000);
    private static final Duration WINDOW = Duration.ofSeconds(Long.getLong("benchmark.windowSeconds", 60));
    private static final int CHURNED_NODES = 100;
    private static final int DEPLOYMENTS = 5;

    private static final String FROM = UpgradeBed.FROM;
    private static final String POOL = ScaleBed.POOL;
    private static final String LOAD_NAMESPACE = "scale-load";
    private static final String SCRIPT_CONFIGMAP = "scale-bench-upgrade";
    private static final String SCRIPT = "#!/bin/sh\nset -eu\nkubeadm upgrade node\n";
    private static final String OPERATOR_USER = "system:serviceaccount:" + TestBed.OPERATOR_NAMESPACE + ":" + TestBed.OPERATOR_SERVICE_ACCOUNT;
    private static final Pattern METRIC = Pattern.compile("^(\\w+)(?:\\{([^}]*)})?\\s+(\\S+)$", Pattern.MULTILINE);
    /** JOSDK's debug line when it runs a reconcile of one resource (EventProcessor). */
    private static final String RECONCILE_LINE = "Executing events for custom resource. Scope: ExecutionScope{resource=ResourceID{name='";

    private TestBed bed;
    private KubernetesClient client;
    private final ObjectMapper json = new ObjectMapper();
    private final List<String> loadNodes = new ArrayList<>();
    private final StringBuilder rows = new StringBuilder();
    private final StringBuilder notes = new StringBuilder();
    private ScaleBed scale;
    private int loadPods;

    @Test
    void operatorCostAtEachSize(TestBed testBed) throws Exception {
        bed = testBed;
        client = bed.client();
        scale = new ScaleBed(bed);
        client.configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(SCRIPT_CONFIGMAP).endMetadata().addToData("upgrade.sh", SCRIPT).build()).serverSideApply();
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(LOAD_NAMESPACE).endMetadata()
                .build()).serverSideApply();
        try (KubeletUpgradeSimulation kubelets = new KubeletUpgradeSimulation(client, TestBed.OPERATOR_NAMESPACE)) {
            for (int size : SIZES) {
                atSize(size, kubelets);
            }
        }
        String report = "| nodes | pods | phase | wall (s) | API requests | requests/min | reconciles (all) | reconciles/min | reconciles of the held operation "
                + "| CPU (s) | RSS end (MiB) | RSS peak (MiB) | heap used (MiB) | heap after GC (MiB) | load avg |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" + rows + "\n" + notes;
        Path out = bed.projectRoot().resolve("target/benchmark-scale.md");
        Files.writeString(out, report);
        System.out.println("[benchmark] scale results (" + out + "):\n" + report);
    }

    private void atSize(int size, KubeletUpgradeSimulation kubelets) throws Exception {
        String tag = "s" + size;
        // The size counts every worker: the load nodes, the 50 upgraded and the held one.
        Instant growing = Instant.now();
        int newLoad = size - UPGRADED - 1 - loadNodes.size();
        loadNodes.addAll(scale.createNodes(newLoad, "v1.35.4", Map.of()));
        List<String> upgraded = scale.createNodes(UPGRADED, FROM, Map.of(POOL, tag + "-upgrade"));
        String held = scale.createNodes(1, FROM, Map.of(POOL, tag + "-held")).get(0);
        scale.awaitReadyNodes();
        double nodesSeconds = seconds(growing, Instant.now());

        Instant podsStart = Instant.now();
        String poolNamespace = "scale-pool-" + tag;
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(poolNamespace).endMetadata()
                .build()).serverSideApply();
        for (int d = 0; d < DEPLOYMENTS; d++) {
            scale.deployment(poolNamespace, "app" + d, UPGRADED * PODS_PER_NODE / DEPLOYMENTS, tag + "-upgrade");
        }
        int wantedLoad = size * PODS_PER_NODE - UPGRADED * PODS_PER_NODE;
        scale.bindPods(LOAD_NAMESPACE, "load-", loadNodes, loadPods, wantedLoad - loadPods);
        loadPods = wantedLoad;
        int runningPods = awaitRunningPods(size * PODS_PER_NODE, Duration.ofMinutes(15));
        double podsSeconds = seconds(podsStart, Instant.now());
        awaitReadyPods(poolNamespace, UPGRADED * PODS_PER_NODE);
        String bedLine = "- " + size + " nodes: nodes created and Ready in " + round(nodesSeconds) + " s; " + runningPods + " pods Running after "
                + round(podsSeconds) + " s (load average " + loadAverage() + ")\n";
        System.out.println("[benchmark] " + bedLine);

        List<Node> nodes = ListPages.all(client.nodes());
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, TestBed.CLUSTER, "CloudManaged", nodes)) {
            // The rest of the 5,000 VMs: other clusters of the same account, which the audit lists and leaves alone.
            SimulatedCluster others = cloudStack.simulator().addCluster("scale-other", Owner.of(cloudStack.simulator().defaultAccount()),
                    "CloudManaged", cloudStack.supportedVersion().id());
            for (int i = nodes.size(); i < VMS; i++) {
                cloudStack.simulator().addClusterVm(others, String.format("scale-other-node-%010x", i), NodeRole.WORKER);
            }
            Map<String, String> properties = new LinkedHashMap<>(cloudStack.operatorProperties());
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            properties.put("cks.upgrade.script-sha256", ScriptTrust.sha256(SCRIPT));
            // The chart's Lease timings, not the short ones of the ITs: the Lease is most of an idle operator's requests.
            properties.put("cks.leader-election.lease-duration-seconds", "150");
            properties.put("cks.leader-election.renew-deadline-seconds", "120");
            properties.put("cks.leader-election.retry-period-seconds", "5");
            properties.put("quarkus.log.category.\"io.javaoperatorsdk.operator.processing.event.EventProcessor\".level", "DEBUG");
            Instant starting = Instant.now();
            try (OperatorProcess operator = OperatorProcess.start(bed, bed.operatorKubeconfig(properties), "scale-" + tag, properties, imageJvmOptions())) {
                double startSeconds = seconds(starting, Instant.now());
                Probe probe = new Probe(operator);
                Thread.sleep(10_000); // the informers' first lists and the first GCs settle
                Sample idleStart = probe.sample();
                Thread.sleep(WINDOW.toMillis());
                Figures idle = probe.between(idleStart, probe.sample(), null);
                row(size, "idle", idle);

                String heldUpgrade = "scale-held-" + tag;
                kubelets.hold(held);
                scale.createUpgrade(heldUpgrade, tag + "-held", SCRIPT_CONFIGMAP, 1, 3600, spec -> { });
                awaitNodePhase(heldUpgrade, UpgradeNodeStatus.Phase.WaitingReady, Duration.ofMinutes(5));
                Thread.sleep(5_000);
                Sample quietStart = probe.sample();
                Thread.sleep(WINDOW.toMillis());
                Figures quiet = probe.between(quietStart, probe.sample(), heldUpgrade);
                row(size, "held, quiet", quiet);

                Sample churnStart = probe.sample();
                int churns = churn(loadNodes.subList(0, Math.min(CHURNED_NODES, loadNodes.size())), WINDOW);
                Figures churn = probe.between(churnStart, probe.sample(), heldUpgrade);
                row(size, "held, churn (" + churns + " cordon changes)", churn);

                String bigUpgrade = "scale-up-" + tag;
                Sample upgradeStart = probe.sample();
                scale.createUpgrade(bigUpgrade, tag + "-upgrade", SCRIPT_CONFIGMAP, MAX_UNAVAILABLE, 300, spec -> { });
                NodeUpgrade done = awaitPhase(bigUpgrade, Duration.ofMinutes(30));
                Figures upgrade = probe.between(upgradeStart, probe.sample(), heldUpgrade);
                row(size, "upgrade of " + UPGRADED + " (maxUnavailable " + MAX_UNAVAILABLE + "): " + done.getStatus().getPhase() + ", evictions "
                        + byLabel(operator.httpGet("/q/metrics"), "cks_drain_evictions_total", "result"), upgrade);
                assertThat(upgrade.reconciles()).as("JOSDK's reconciliations_started_total in /q/metrics counts the upgrade's reconciles").isPositive();
                assertThat(done.getStatus().getPhase()).as("the upgrade of %d workers: %s", UPGRADED, done.getStatus().getMessage())
                        .isEqualTo(NodeUpgradeStatus.Phase.Succeeded);

                int callsBefore = cloudStack.simulator().calls().size();
                Sample auditStart = probe.sample();
                VMMapAuditStatus audit = runAudit(tag, cloudStack.cluster().id());
                Figures auditFigures = probe.between(auditStart, probe.sample(), null);
                row(size, "audit of " + VMS + " VMs (" + (cloudStack.simulator().calls().size() - callsBefore) + " CloudStack calls, run "
                        + audit.getLastRun().getDurationMillis() + " ms, " + audit.getPhase() + " " + audit.getFindingCounts() + ")", auditFigures);

                notes.append(bedLine).append("  operator ready ").append(round(startSeconds)).append(" s after start; ")
                        .append("held operation: ").append(quiet.heldReconciles()).append(" reconciles quiet, ").append(churn.heldReconciles())
                        .append(" during churn, ").append(upgrade.heldReconciles()).append(" during the upgrade of ").append(UPGRADED)
                        .append(" (").append(round(upgrade.wallSeconds())).append(" s); most frequent requests: idle ").append(idle.top())
                        .append("; held, churn ").append(churn.top()).append("; upgrade ").append(upgrade.top()).append("; audit ")
                        .append(auditFigures.top()).append("\n");

                // Nodes the held operation does not hold changed `churns` times: it must wake no more often than
                // when nothing changes (+1 for where a window cuts a periodic wake-up).
                assertThat(churn.heldReconciles()).as("reconciles of %s while %d cordon changes happened on nodes it does not hold", heldUpgrade, churns)
                        .isLessThanOrEqualTo(quiet.heldReconciles() + 1);
                long atQuietRate = (long) Math.ceil(quiet.heldReconciles() * upgrade.wallSeconds() / quiet.wallSeconds());
                assertThat(upgrade.heldReconciles()).as("reconciles of %s during the upgrade of %d other nodes (%s s)", heldUpgrade, UPGRADED,
                        round(upgrade.wallSeconds())).isLessThanOrEqualTo(atQuietRate + 1);

                client.resources(VMMapAudit.class).withName("scale-audit-" + tag).delete();
                for (String name : List.of(heldUpgrade, bigUpgrade)) {
                    client.resources(NodeUpgrade.class).withName(name).delete();
                }
                Awaitility.await("NodeUpgrades of " + tag + " deleted").atMost(Duration.ofMinutes(2))
                        .until(() -> client.resources(NodeUpgrade.class).withName(heldUpgrade).get() == null
                                && client.resources(NodeUpgrade.class).withName(bigUpgrade).get() == null);
            }
        } finally {
            kubelets.release(held);
            client.namespaces().withName(poolNamespace).delete();
            for (String node : upgraded) {
                client.nodes().withName(node).delete();
            }
            client.nodes().withName(held).delete();
        }
    }

    // ---- the bed -------------------------------------------------------------------------

    /** How many pods run when all wanted do, or when the time is up (the bed may not cope). */
    private int awaitRunningPods(int wanted, Duration atMost) throws InterruptedException {
        Instant end = Instant.now().plus(atMost);
        int running = 0;
        while (Instant.now().isBefore(end)) {
            running = (int) ListPages.all(client.pods().inAnyNamespace()).stream()
                    .filter(p -> p.getMetadata().getNamespace().startsWith("scale-") && p.getMetadata().getDeletionTimestamp() == null && p.getStatus() != null && "Running".equals(p.getStatus().getPhase()))
                    .count();
            if (running >= wanted) {
                return running;
            }
            Thread.sleep(5_000);
        }
        return running;
    }

    private void awaitReadyPods(String namespace, int wanted) {
        Awaitility.await(wanted + " Ready pods in " + namespace).atMost(Duration.ofMinutes(10)).pollInterval(Duration.ofSeconds(3))
                .until(() -> client.pods().inNamespace(namespace).list().getItems().stream()
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null && p.getStatus() != null && p.getStatus().getConditions() != null
                                && p.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())))
                        .count() >= wanted);
    }

    /** Cordons and uncordons the nodes in turns until the window ends; returns how many changes were made. */
    private int churn(List<String> nodes, Duration window) {
        Instant end = Instant.now().plus(window);
        int changes = 0;
        boolean cordon = true;
        while (Instant.now().isBefore(end)) {
            for (String node : nodes) {
                client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":" + (cordon ? "true" : "null") + "}}");
                changes++;
            }
            cordon = !cordon;
            pause(Duration.ofSeconds(2));
        }
        if (!cordon) {
            for (String node : nodes) {
                client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":null}}");
            }
        }
        return changes;
    }

    private static void pause(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---- the operations -------------------------------------------------------------------

    private void awaitNodePhase(String name, UpgradeNodeStatus.Phase phase, Duration atMost) {
        Awaitility.await(name + " at " + phase).atMost(atMost).pollInterval(Duration.ofSeconds(1)).until(() -> {
            NodeUpgrade upgrade = client.resources(NodeUpgrade.class).withName(name).get();
            return upgrade.getStatus() != null && upgrade.getStatus().getNodes() != null
                    && upgrade.getStatus().getNodes().stream().anyMatch(n -> n.getPhase() == phase);
        });
    }

    private NodeUpgrade awaitPhase(String name, Duration atMost) {
        return Awaitility.await(name + " finished").atMost(atMost).pollInterval(Duration.ofSeconds(1))
                .until(() -> client.resources(NodeUpgrade.class).withName(name).get(),
                        u -> u.getStatus() != null && u.getStatus().getPhase() != null && u.getStatus().finished());
    }

    private VMMapAuditStatus runAudit(String tag, String clusterId) {
        VMMapAudit audit = new VMMapAudit();
        audit.setMetadata(new ObjectMetaBuilder().withName("scale-audit-" + tag).build());
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId(clusterId);
        spec.setIntervalSeconds(3600);
        spec.setGracePeriodSeconds(0);
        audit.setSpec(spec);
        client.resource(audit).create();
        return Awaitility.await("the audit's first run").atMost(Duration.ofMinutes(5)).pollInterval(Duration.ofMillis(500))
                .until(() -> client.resources(VMMapAudit.class).withName("scale-audit-" + tag).get().getStatus(),
                        status -> status != null && status.getLastRun() != null && status.getLastRun().getDurationMillis() != null);
    }

    // ---- measuring ------------------------------------------------------------------------

    private List<String> imageJvmOptions() throws IOException {
        return OperatorProcess.imageJvmOptions(bed);
    }

    record Sample(Instant at, long auditOffset, double cpuSeconds, double reconciles, long logLength) {
    }

    record Figures(double wallSeconds, long requests, double reconciles, long heldReconciles, double cpuSeconds, long rssMiB, long peakMiB,
            double heapUsedMiB, double heapAfterGcMiB, String top) {
    }

    private final class Probe {
        private final OperatorProcess operator;
        private final Path auditLog;

        Probe(OperatorProcess operator) {
            this.operator = operator;
            this.auditLog = bed.auditLog();
        }

        Sample sample() throws IOException {
            return new Sample(Instant.now(), Files.size(auditLog), cpuSeconds(), metric(metrics(), "reconciliations_started_total", null),
                    Files.size(operator.log()));
        }

        Figures between(Sample start, Sample end, String heldOperation) throws IOException, InterruptedException {
            Thread.sleep(2_000); // the audit log is written when a request completes
            List<JsonNode> requests = requests(start, end);
            String metrics = metrics();
            String log = new String(Files.readAllBytes(operator.log()), StandardCharsets.UTF_8);
            long held = heldOperation == null ? 0 : count(log.substring((int) Math.min(start.logLength(), log.length()),
                    (int) Math.min(end.logLength(), log.length())), RECONCILE_LINE + heldOperation + "'");
            Map<String, Long> status = procStatus();
            return new Figures(seconds(start.at(), end.at()), requests.size(), end.reconciles() - start.reconciles(), held,
                    end.cpuSeconds() - start.cpuSeconds(), status.get("VmRSS") / 1024, status.get("VmHWM") / 1024,
                    metric(metrics, "jvm_memory_used_bytes", "area=\"heap\"") / (1 << 20), metric(metrics, "jvm_gc_live_data_size_bytes", null) / (1 << 20),
                    top(requests, 4));
        }

        private List<JsonNode> requests(Sample start, Sample end) throws IOException {
            List<JsonNode> requests = new ArrayList<>();
            try (RandomAccessFile file = new RandomAccessFile(auditLog.toFile(), "r")) {
                file.seek(Math.max(0, start.auditOffset() - 1_000_000));
                byte[] rest = new byte[(int) (file.length() - file.getFilePointer())];
                file.readFully(rest);
                for (String line : new String(rest, StandardCharsets.UTF_8).split("\n")) {
                    if (!line.startsWith("{") || !line.contains(OPERATOR_USER)) {
                        continue;
                    }
                    JsonNode event = json.readTree(line);
                    Instant received = Instant.parse(event.path("requestReceivedTimestamp").asText());
                    if (OPERATOR_USER.equals(event.path("user").path("username").asText()) && !received.isBefore(start.at()) && received.isBefore(end.at())) {
                        requests.add(event);
                    }
                }
            }
            return requests;
        }

        private String metrics() throws IOException {
            return operator.httpGet("/q/metrics");
        }

        private double cpuSeconds() throws IOException {
            return operator.cpuSeconds();
        }

        private Map<String, Long> procStatus() throws IOException {
            return operator.procStatus();
        }
    }

    private static String top(List<JsonNode> requests, int limit) {
        Map<String, Long> byKind = requests.stream().collect(Collectors.groupingBy(e -> e.path("verb").asText() + " "
                + e.path("objectRef").path("resource").asText() + (e.path("objectRef").path("subresource").isMissingNode() ? ""
                        : "/" + e.path("objectRef").path("subresource").asText()), Collectors.counting()));
        return byKind.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(limit)
                .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    /** A counter's samples by one label's value (e.g. evictions by result). */
    private static Map<String, Long> byLabel(String metrics, String name, String label) {
        Map<String, Long> values = new TreeMap<>();
        Matcher m = METRIC.matcher(metrics);
        Pattern value = Pattern.compile(label + "=\"([^\"]*)\"");
        while (m.find()) {
            Matcher labelValue = m.group(2) == null ? null : value.matcher(m.group(2));
            if (m.group(1).equals(name) && labelValue != null && labelValue.find()) {
                values.merge(labelValue.group(1), Math.round(Double.parseDouble(m.group(3))), Long::sum);
            }
        }
        return values;
    }

    /** Sum of a metric's samples (with a label filter when given). */
    private static double metric(String metrics, String name, String labelFilter) {
        double sum = 0;
        Matcher m = METRIC.matcher(metrics);
        while (m.find()) {
            if (m.group(1).equals(name) && (labelFilter == null || (m.group(2) != null && m.group(2).contains(labelFilter)))) {
                sum += Double.parseDouble(m.group(3));
            }
        }
        return sum;
    }

    private void row(int size, String phase, Figures f) {
        double minutes = f.wallSeconds() / 60;
        String line = "| " + size + " | " + size * PODS_PER_NODE + " | " + phase + " | " + round(f.wallSeconds()) + " | " + f.requests() + " | "
                + round(f.requests() / minutes) + " | " + Math.round(f.reconciles()) + " | " + round(f.reconciles() / minutes) + " | " + f.heldReconciles() + " | " + round(f.cpuSeconds())
                + " | " + f.rssMiB() + " | " + f.peakMiB() + " | " + round(f.heapUsedMiB()) + " | " + round(f.heapAfterGcMiB()) + " | " + loadAverage()
                + " |\n";
        rows.append(line);
        System.out.println("[benchmark] " + line.strip() + "  top: " + f.top());
    }

    private static long count(String text, String needle) {
        long n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }

    private static String loadAverage() {
        try {
            return String.join(" ", Arrays.copyOf(Files.readString(Path.of("/proc/loadavg")).split(" "), 3));
        } catch (IOException e) {
            return "?";
        }
    }

    private static double seconds(Instant from, Instant to) {
        return Duration.between(from, to).toMillis() / 1000.0;
    }

    private static String round(double value) {
        return String.format(java.util.Locale.ROOT, "%.1f", value);
    }
}
