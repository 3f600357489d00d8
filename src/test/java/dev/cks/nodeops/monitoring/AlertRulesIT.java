package dev.cks.nodeops.monitoring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The chart's alerts, as Helm renders them, checked and unit-tested by Prometheus' own promtool
 * (`promtool test rules`, built from its Go module by hack/testbed.sh): one test per alert in
 * src/test/resources/alerts/alerts-test.yaml; and each alert's runbook_url is a section of
 * docs/troubleshooting.md. An IT because it needs the bed's Helm and a built promtool, not a cluster.
 */
class AlertRulesIT {
    private static final Path WORK = Path.of("target/alerts");
    private static final String TROUBLESHOOTING = "docs/troubleshooting.md";

    @Test
    void everyAlertFiresResolvesAndSurvivesAFailoverAsItsTestSays() throws Exception {
        Files.createDirectories(WORK);
        String rendered = run(helm(), "template", "t", "deploy/helm/cks-node-operator", "-n", "ops", "--kube-version", "v1.35.4",
                "--set", "metrics.prometheusRule.enabled=true", "--show-only", "templates/prometheusrule.yaml");
        KubernetesSerialization yaml = new KubernetesSerialization();
        GenericKubernetesResource rule = yaml.unmarshal(rendered, GenericKubernetesResource.class);
        Object groups = ((Map<?, ?>) rule.getAdditionalProperties().get("spec")).get("groups");
        Files.writeString(WORK.resolve("rules.yaml"), yaml.asYaml(Map.of("groups", groups)));
        Files.copy(Path.of("src/test/resources/alerts/alerts-test.yaml"), WORK.resolve("alerts-test.yaml"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        String promtool = lastLine(run("bash", "hack/testbed.sh", "promtool"));

        assertThat(run(promtool, "check", "rules", WORK.resolve("rules.yaml").toString())).contains("SUCCESS: 7 rules found");
        String tests = Files.readString(WORK.resolve("alerts-test.yaml"));
        for (String alert : List.of("CksOperatorDown", "CksDrainBlocked", "CksOperationFailed", "CksVmMapDrift", "CksVmMapAuditStale",
                "CksCloudStackCredentialsRejected", "CksNodeUndrainable")) {
            assertThat(rendered).contains("alert: " + alert);
            assertThat(tests).as("a test of %s", alert).contains("alertname: " + alert);
        }
        assertThat(run(promtool, "test", "rules", WORK.resolve("alerts-test.yaml").toString())).contains("SUCCESS");
        assertThat(runbooksNotInTheDoc(groups)).as("alerts whose runbook_url is not a section of %s (its anchors: %s)", TROUBLESHOOTING, anchors())
                .isEmpty();
    }

    /** Alert → its runbook_url, for each rule without one that ends in docs/troubleshooting.md#<a heading's anchor>. */
    private static Map<String, String> runbooksNotInTheDoc(Object groups) throws IOException {
        Set<String> anchors = anchors();
        Map<String, String> wrong = new TreeMap<>();
        for (Object group : (List<?>) groups) {
            for (Object rule : (List<?>) ((Map<?, ?>) group).get("rules")) {
                Object runbook = ((Map<?, ?>) ((Map<?, ?>) rule).get("annotations")).get("runbook_url");
                String url = runbook == null ? "" : runbook.toString();
                String anchor = url.substring(url.indexOf('#') + 1);
                if (!url.contains(TROUBLESHOOTING + "#") || !anchors.contains(anchor)) {
                    wrong.put(((Map<?, ?>) rule).get("alert").toString(), url);
                }
            }
        }
        return wrong;
    }

    /** The anchors GitHub gives the headings of docs/troubleshooting.md: lower case, spaces as '-', other punctuation dropped. */
    private static Set<String> anchors() throws IOException {
        return Files.readAllLines(Path.of(TROUBLESHOOTING)).stream().filter(line -> line.startsWith("#"))
                .map(line -> line.replaceFirst("^#+\\s*", "").strip().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static String helm() throws IOException, InterruptedException {
        run("bash", "hack/testbed.sh", "build"); // nothing to do when the bed's binaries are cached
        return Path.of(lastLine(run("bash", "hack/testbed.sh", "bin")), "helm").toString();
    }

    /**
     * The path a testbed.sh command prints last: on a fresh machine the same output (stderr merged in) also
     * holds the build's progress, e.g. promtool's first build with Go's module downloads.
     */
    private static String lastLine(String output) {
        return output.strip().lines().reduce((first, second) -> second).orElseThrow();
    }

    /** Runs a command in the project root; fails with its output when it exits non-zero. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(20, TimeUnit.MINUTES)).as("%s finished", String.join(" ", command)).isTrue();
        assertThat(process.exitValue()).as("%s exited with:\n%s", String.join(" ", command), output).isZero();
        return output;
    }
}
