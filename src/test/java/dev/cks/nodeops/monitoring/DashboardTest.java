package dev.cks.nodeops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The chart's Grafana dashboard asks only for what the operator exports: every metric a query selects is
 * one of ours (as a Prometheus scrape of every metrics class shows it, MetricsDocTest) or one of the operator
 * SDK's that docs/metrics.md lists (VMMapAuditIT finds those on a running operator), and every selector is
 * limited to the namespace chosen on the dashboard, so two installations never mix; `_bucket` series are
 * asked only of histograms.
 */
class DashboardTest {
    private static final Path DASHBOARD = Path.of("deploy/helm/cks-node-operator/dashboards/cks-node-operator.json");
    /** A series selector: a metric name and its label matchers. */
    private static final Pattern SELECTOR = Pattern.compile("\\b([a-z_:][a-z0-9_:]*)\\{([^}]*)}");
    private static final Pattern VARIABLE_METRIC = Pattern.compile("label_values\\((\\w+),");

    @Test
    void everyQueryNamesAMetricTheOperatorExportsInTheChosenNamespace() throws IOException {
        Set<String> exported = new TreeSet<>(MetricsDocTest.exported().keySet());
        exported.addAll(MetricsDocTest.frameworkMetrics().keySet());
        Map<String, String> types = MetricsDocTest.exportedTypes();
        List<String> queries = queries(new ObjectMapper().readTree(DASHBOARD.toFile()));
        assertThat(queries).as("queries of %s", DASHBOARD).hasSizeGreaterThan(10);

        Map<String, String> wrong = new TreeMap<>();
        for (String query : queries) {
            boolean any = false;
            Matcher variable = VARIABLE_METRIC.matcher(query);
            if (variable.find()) {
                any = true;
                if (!exported.contains(variable.group(1))) {
                    wrong.put(variable.group(1), query);
                }
            }
            Matcher selector = SELECTOR.matcher(query);
            while (selector.find()) {
                any = true;
                String metric = exported.contains(selector.group(1)) ? selector.group(1) : selector.group(1).replaceFirst("_(bucket|count|sum|max)$", "");
                if (!exported.contains(metric)) {
                    wrong.put(selector.group(1), query);
                } else if (selector.group(1).endsWith("_bucket") && !"histogram".equals(types.get(metric))) {
                    wrong.put(selector.group(1) + " of a " + types.get(metric) + ", not a histogram", query);
                } else if (!selector.group(2).contains("namespace=~\"$namespace\"")) {
                    wrong.put(selector.group(1) + " without namespace=~\"$namespace\"", query);
                }
            }
            if (!any) {
                wrong.put("(no metric selected)", query);
            }
        }
        assertThat(wrong).as("metrics the dashboard asks for that the operator does not export, or outside the chosen namespace (it exports %s)", exported)
                .isEmpty();
    }

    /** Every panel's query (rows' panels too) and every query variable's. */
    private static List<String> queries(JsonNode dashboard) {
        List<String> queries = new ArrayList<>();
        List<JsonNode> panels = new ArrayList<>();
        dashboard.path("panels").forEach(panels::add);
        dashboard.path("panels").forEach(panel -> panel.path("panels").forEach(panels::add));
        panels.forEach(panel -> panel.path("targets").forEach(target -> queries.add(target.path("expr").asText())));
        dashboard.path("templating").path("list").forEach(variable -> {
            if (variable.path("type").asText().equals("query")) {
                queries.add(variable.path("definition").asText());
            }
        });
        return queries;
    }
}
