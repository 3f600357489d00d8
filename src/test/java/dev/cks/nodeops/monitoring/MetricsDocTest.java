package dev.cks.nodeops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.AuditMetrics;
import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.audit.VMMapAuditStatus;
import dev.cks.nodeops.audit.VmMapFinding;
import dev.cks.nodeops.cloudstack.CloudStackApiMetrics;
import dev.cks.nodeops.common.LeaderElection;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;

/**
 * docs/metrics.md is true: every metric and label it names is what the code exports, in Prometheus'
 * own format (every metrics class of the operator records once into a Prometheus registry), every
 * metric the code exports is in the doc with its type (durations as histograms, with the bucket range
 * the doc gives) and carries the project's one prefix, `cks_`, and the label values it lists for
 * findings and audit runs are the code's.
 */
public class MetricsDocTest {
    private static final Path DOC = Path.of("docs/metrics.md");
    private static final String FRAMEWORK = "## Framework";
    /** A row of a metrics table; the labels cell is empty for a metric without labels. */
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z_]+)` \\| (\\w+) \\|([^|]*)\\|(.*)\\|\\s*$");
    /** A histogram's bucket range as a row of the doc gives it: {@code buckets 50 ms to 2 min}. */
    private static final Pattern BUCKETS = Pattern.compile("buckets ([0-9.]+ (?:ms|s|min|h)) to ([0-9.]+ (?:ms|s|min|h))");
    private static final Pattern TYPE = Pattern.compile("^# TYPE ([a-z_]+) (\\w+)$");
    private static final Pattern BUCKET_BOUND = Pattern.compile("le=\"([0-9.]+)\"");
    /** A metric of ours as prose names it, with the labels it lists in docs form ({@code cks_vmmap_findings{audit,type}}). */
    private static final Pattern NAMED = Pattern.compile("\\b((?:cks|cloudstack)_[a-z_]+)(?:\\{([a-z_,]+)\\})?");
    private static final Pattern SAMPLE = Pattern.compile("^([a-z_]+?)(_count|_sum|_max|_bucket)?(?:\\{([^}]*)\\})? ");

    @Test
    void everyDocumentedMetricAndLabelIsExportedAndEveryExportedOneIsDocumented() throws IOException {
        Map<String, Set<String>> documented = documented();
        Map<String, Set<String>> exported = exported();

        assertThat(documented).as("metrics and labels in docs/metrics.md").isNotEmpty();
        for (Map.Entry<String, Set<String>> metric : documented.entrySet()) {
            assertThat(exported).as("docs/metrics.md names %s, which the code does not export (it exports %s)", metric.getKey(), exported.keySet())
                    .containsKey(metric.getKey());
            assertThat(exported.get(metric.getKey())).as("labels of %s", metric.getKey()).isEqualTo(metric.getValue());
        }
        assertThat(documented.keySet()).as("every metric of ours is in docs/metrics.md").containsAll(exported.keySet());
    }

    @Test
    void everyMetricOfOursThatADocOrAnAlertNamesIsExportedWithThoseLabels() throws IOException {
        Map<String, Set<String>> exported = exported();
        Map<String, String> wrong = new TreeMap<>();
        for (Path file : namingMetrics()) {
            for (String line : Files.readAllLines(file)) {
                Matcher named = NAMED.matcher(line);
                while (named.find()) {
                    String metric = exported.containsKey(named.group(1)) ? named.group(1) : named.group(1).replaceFirst("_(bucket|count|sum|max)$", "");
                    Set<String> labels = named.group(2) == null ? Set.of() : Set.of(named.group(2).split(","));
                    if (!exported.containsKey(metric) || !exported.get(metric).containsAll(labels)) {
                        wrong.put(named.group(), file + ": " + line.strip());
                    }
                }
            }
        }
        assertThat(wrong).as("metrics (or labels) named in the docs or the chart's alerts that the code does not export (it exports %s)", exported).isEmpty();
    }

    @Test
    void everyMetricOfOursCarriesTheProjectPrefix() {
        assertThat(exported().keySet()).as("metrics the operator's own metrics classes export").isNotEmpty()
                .allSatisfy(metric -> assertThat(metric).as("one prefix for everything the operator exports").startsWith("cks_"));
    }

    @Test
    void everyDocumentedTypeIsTheExportedOneAndEveryHistogramHasTheDocumentedBuckets() throws IOException {
        String scrape = scrape();
        Map<String, String> types = types(scrape);
        List<String> doc = Files.readAllLines(DOC).subList(0, Files.readAllLines(DOC).indexOf(FRAMEWORK));
        Map<String, String> documented = new TreeMap<>();
        for (String line : doc) {
            Matcher row = ROW.matcher(line);
            if (!row.matches() || row.group(2).equals("type")) {
                continue;
            }
            documented.put(row.group(1), row.group(2));
            if (row.group(2).equals("histogram")) {
                Matcher buckets = BUCKETS.matcher(row.group(4));
                assertThat(buckets.find()).as("docs/metrics.md gives the buckets of histogram %s", row.group(1)).isTrue();
                List<Double> bounds = scrape.lines().filter(l -> l.startsWith(row.group(1) + "_bucket{")).map(BUCKET_BOUND::matcher)
                        .filter(Matcher::find).map(m -> Double.parseDouble(m.group(1))).distinct().sorted().toList();
                assertThat(bounds).as("the finite bucket bounds of %s", row.group(1)).isNotEmpty();
                assertThat(List.of(bounds.get(0), bounds.get(bounds.size() - 1))).as("the bucket range of %s in docs/metrics.md", row.group(1))
                        .containsExactly(seconds(buckets.group(1)), seconds(buckets.group(2)));
            }
        }
        assertThat(documented).as("types in docs/metrics.md, as the scrape declares them").isEqualTo(types);
        assertThat(types).as("every duration is a histogram, none a summary").doesNotContainValue("summary")
                .containsEntry("cks_node_step_seconds", "histogram");
    }

    /** "50 ms", "0.1 s", "2 min", "4 h" in seconds. */
    private static double seconds(String amount) {
        String[] parts = amount.split(" ");
        double value = Double.parseDouble(parts[0]);
        return switch (parts[1]) {
            case "ms" -> value / 1000;
            case "min" -> value * 60;
            case "h" -> value * 3600;
            default -> value;
        };
    }

    /** Metric → its Prometheus type (counter, gauge, histogram) as a scrape of every metrics class declares it. */
    static Map<String, String> exportedTypes() {
        return types(scrape());
    }

    /** Metric → its Prometheus type as the scrape declares it; a histogram's `_max` gauge is part of the histogram. */
    private static Map<String, String> types(String scrape) {
        Map<String, String> types = new TreeMap<>();
        scrape.lines().map(TYPE::matcher).filter(Matcher::matches).forEach(m -> types.put(m.group(1), m.group(2)));
        types.keySet().removeIf(name -> name.endsWith("_max") && "histogram".equals(types.get(name.substring(0, name.length() - 4))));
        Map<String, String> byMetric = new TreeMap<>();
        // A counter's TYPE line names it without _total, as its samples do not.
        types.forEach((name, type) -> byMetric.put(type.equals("counter") && !name.endsWith("_total") ? name + "_total" : name, type));
        return byMetric;
    }

    @Test
    void documentedLabelValuesAreTheCodes() throws IOException {
        String doc = Files.readString(Path.of("docs/metrics.md"));
        assertThat(backticked(row(doc, "cks_vmmap_findings"))).as("finding types")
                .containsAll(Arrays.stream(VmMapFinding.Type.values()).map(Enum::name).toList());
        Set<String> outcomes = Arrays.stream(AuditMetrics.RunOutcome.values()).map(AuditMetrics.RunOutcome::label).collect(Collectors.toSet());
        assertThat(backticked(row(doc, "cks_vmmap_audit_runs_total"))).as("audit run outcomes").containsAll(outcomes)
                .filteredOn(v -> !Set.of("cks_vmmap_audit_runs_total", "audit", "outcome").contains(v)).allMatch(outcomes::contains);
    }

    /** The docs, the README and the chart's templates (its alert rules). */
    private static List<Path> namingMetrics() throws IOException {
        try (Stream<Path> docs = Files.list(Path.of("docs")); Stream<Path> templates = Files.walk(Path.of("deploy/helm/cks-node-operator/templates"))) {
            return Stream.of(docs.filter(f -> f.toString().endsWith(".md")), templates.filter(f -> f.toString().endsWith(".yaml")), Stream.of(Path.of("README.md")))
                    .flatMap(f -> f).sorted().toList();
        }
    }

    private static String row(String doc, String metric) {
        return doc.lines().filter(l -> l.startsWith("| `" + metric + "` |")).findFirst().orElseThrow();
    }

    private static Set<String> backticked(String text) {
        return Pattern.compile("`([^`]+)`").matcher(text).results().map(m -> m.group(1)).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Metric → labels, from the tables of docs/metrics.md. */
    private static Map<String, Set<String>> documented() throws IOException {
        List<String> doc = Files.readAllLines(DOC);
        return rows(doc.subList(0, doc.indexOf(FRAMEWORK)));
    }

    /** The operator SDK's metrics docs/metrics.md lists under "Framework" → their labels. */
    public static Map<String, Set<String>> frameworkMetrics() throws IOException {
        List<String> doc = Files.readAllLines(DOC);
        return rows(doc.subList(doc.indexOf(FRAMEWORK), doc.indexOf("## Alerts (`metrics.prometheusRule.enabled=true`)")));
    }

    /** Whether a framework metric appears only once a reconcile failed or was retried. */
    public static boolean appearsAfterTheFirst(String frameworkMetric) throws IOException {
        return Files.readAllLines(DOC).stream().anyMatch(l -> l.startsWith("| `" + frameworkMetric + "` |") && l.contains("(appears after the first)"));
    }

    private static Map<String, Set<String>> rows(List<String> lines) {
        Map<String, Set<String>> metrics = new TreeMap<>();
        for (String line : lines) {
            Matcher row = ROW.matcher(line);
            if (row.matches() && !row.group(2).equals("type")) {
                metrics.put(row.group(1), backticked(row.group(3)));
            }
        }
        return metrics;
    }

    /** Metric → labels of our metrics, as a Prometheus scrape shows them after every metrics class recorded once. */
    static Map<String, Set<String>> exported() {
        Map<String, Set<String>> metrics = new TreeMap<>();
        for (String line : scrape().lines().toList()) {
            Matcher sample = SAMPLE.matcher(line);
            if (line.startsWith("#") || !sample.find()) {
                continue;
            }
            Set<String> labels = Pattern.compile("([a-z_]+)=\"").matcher(sample.group(3) == null ? "" : sample.group(3)).results().map(m -> m.group(1))
                    .filter(l -> !l.equals("le") && !l.equals("quantile")).collect(Collectors.toCollection(TreeSet::new));
            metrics.merge(sample.group(1), labels, (a, b) -> {
                a.addAll(b);
                return a;
            });
        }
        return metrics;
    }

    /** A Prometheus scrape of a registry that only the operator's metrics classes recorded into, each once. */
    private static String scrape() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        OperatorSettings settings = settings();
        new OperationMetrics(registry).finished("ScaleDown", "Succeeded");
        new OperationMetrics(registry).nodeStep("ScaleDown", "drain", Duration.ofSeconds(3));
        new OperationMetrics(registry).evictionAnswered("ScaleDown", "evicted");
        new AuditMetrics(registry).recordComparison("cluster", Duration.ofMillis(40), true);
        new dev.cks.nodeops.drainability.DrainabilityMetrics(registry).publish("nodes",
                List.of(new dev.cks.nodeops.drainability.Drainability.Verdict("w1", Set.of(), List.of())));
        CloudStackApiMetrics cloudStack = new CloudStackApiMetrics(registry);
        cloudStack.recordRequest("listVirtualMachines", CloudStackApiMetrics.SUCCESS, Duration.ofMillis(5));
        cloudStack.recordRetry("listVirtualMachines");
        cloudStack.recordError("listVirtualMachines", 530);
        cloudStack.recordJob("scaleKubernetesCluster", CloudStackApiMetrics.SUCCESS, Duration.ofSeconds(2));
        new LeaderElection(settings, registry, null, java.time.Clock.systemUTC(), new dev.cks.nodeops.common.LeaderFence(settings, java.time.Clock.systemUTC()));
        new StatusMetrics(null, settings, registry, java.time.Clock.systemUTC()).export(List.of(upgradeDraining(), upgradeHolding()), List.of(scaleDown()), List.of(auditThatRan()));
        return registry.scrape();
    }

    private static NodeUpgrade upgradeDraining() {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName("to-1-35");
        upgrade.setStatus(new NodeUpgradeStatus());
        upgrade.getStatus().setPhase(NodeUpgradeStatus.Phase.Running);
        upgrade.getStatus().setEstimatedFinish("2026-11-30T13:00:00Z");
        UpgradeNodeStatus node = new UpgradeNodeStatus();
        node.setName("w1");
        node.setPhase(UpgradeNodeStatus.Phase.Draining);
        node.setDrain(new DrainState());
        upgrade.getStatus().getNodes().add(node);
        return upgrade;
    }

    /** A Continuous NodeUpgrade holding its version with a node below it. */
    private static NodeUpgrade upgradeHolding() {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName("hold-1-35");
        upgrade.setStatus(new NodeUpgradeStatus());
        upgrade.getStatus().setPhase(NodeUpgradeStatus.Phase.Holding);
        upgrade.getStatus().setHold(new dev.cks.nodeops.upgrade.HoldStatus());
        upgrade.getStatus().getHold().setBelowTarget(1);
        return upgrade;
    }

    private static ScaleDown scaleDown() {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName("remove-one");
        scaleDown.setStatus(new ScaleDownStatus());
        scaleDown.getStatus().setPhase(ScaleDownStatus.Phase.RolledBack);
        return scaleDown;
    }

    private static VMMapAudit auditThatRan() {
        VMMapAudit audit = new VMMapAudit();
        audit.getMetadata().setName("cluster");
        audit.setSpec(new VMMapAuditSpec());
        audit.setStatus(new VMMapAuditStatus());
        audit.getStatus().setLastRun(new VMMapAuditStatus.LastRun());
        audit.getStatus().setLastCompleteRunAt("2026-11-30T12:00:00Z");
        return audit;
    }

    /** The settings' defaults, as the operator would have them with no configuration. */
    private static OperatorSettings settings() {
        return (OperatorSettings) defaults(OperatorSettings.class);
    }

    private static Object defaults(Class<?> type) {
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type }, (proxy, method, args) -> {
            Class<?> returns = method.getReturnType();
            io.smallrye.config.WithDefault fallback = method.getAnnotation(io.smallrye.config.WithDefault.class);
            if (returns == String.class) {
                return fallback == null ? "cks-node-operator" : fallback.value();
            }
            if (returns == int.class) {
                return fallback == null ? 0 : Integer.parseInt(fallback.value());
            }
            if (returns == boolean.class) {
                return fallback == null || Boolean.parseBoolean(fallback.value());
            }
            if (returns == Optional.class) {
                return Optional.empty();
            }
            return returns.isInterface() ? defaults(returns) : null;
        });
    }
}
