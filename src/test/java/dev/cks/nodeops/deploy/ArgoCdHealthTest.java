package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.drainability.DrainReport;
import dev.cks.nodeops.drainability.DrainReportStatus;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.audit.VMMapAuditStatus;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperationStatus;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * The Argo CD health check (deploy/argocd/health.lua) run by a real Lua 5.1 interpreter (Argo CD runs
 * health checks in gopher-lua, a Lua 5.1) on objects as the API server stores them: the operator's own
 * model classes, their status written by the operator's own recorder, serialized as the client sends
 * them. And docs/gitops.md shows that same script for each kind.
 */
class ArgoCdHealthTest {
    private static final Path SCRIPT = Path.of("deploy/argocd/health.lua");
    private static final Path DOC = Path.of("docs/gitops.md");
    private static final String LUA = "lua5.1";
    private static final Instant NOW = Instant.parse("2026-12-03T06:00:00Z");
    private final OperationRecorder upgrades = new OperationRecorder("NodeUpgrade", new RecordingEvents(), new OperationMetrics(new SimpleMeterRegistry()));
    private final OperationRecorder scaleDowns = new OperationRecorder("ScaleDown", new RecordingEvents(), new OperationMetrics(new SimpleMeterRegistry()));

    @Test
    void anOperationTheOperatorHasNotPickedUpIsProgressing() throws Exception {
        NodeUpgrade created = upgrade();
        created.setStatus(null);

        assertThat(health(created)).isEqualTo(new Health("Progressing", "Waiting for the operator to pick it up"));
    }

    @Test
    void anOperationAtWorkIsProgressingWithItsMessage() throws Exception {
        NodeUpgrade running = upgrade();
        running.getStatus().enter(Stage.RUNNING);
        upgrades.progressing(running, "Draining", "Draining node w1: 3 pod(s) left.", NOW);

        assertThat(health(running)).isEqualTo(new Health("Progressing", "Draining node w1: 3 pod(s) left."));
    }

    @Test
    void aStatusOfAnOlderGenerationIsProgressingUntilTheOperatorActsOnTheNewSpec() throws Exception {
        NodeUpgrade succeeded = upgrade();
        upgrades.finished(succeeded, Stage.SUCCEEDED, Conditions.SUCCEEDED, "AllNodesUpgraded", "All 3 selected nodes are at v1.35.4 and Ready.", NOW);
        succeeded.getMetadata().setGeneration(2L);

        assertThat(health(succeeded)).isEqualTo(new Health("Progressing", "Waiting for the operator to act on generation 2"));
    }

    @Test
    void aSucceededOperationIsHealthy() throws Exception {
        NodeUpgrade succeeded = upgrade();
        upgrades.finished(succeeded, Stage.SUCCEEDED, Conditions.SUCCEEDED, "AllNodesUpgraded", "All 3 selected nodes are at v1.35.4 and Ready.", NOW);

        assertThat(health(succeeded)).isEqualTo(new Health("Healthy", "All 3 selected nodes are at v1.35.4 and Ready."));
    }

    @Test
    void aFailedOrRolledBackOperationIsDegraded() throws Exception {
        NodeUpgrade failed = upgrade();
        upgrades.finished(failed, Stage.FAILED, Conditions.FAILED, "NodeFailed", "The upgrade failed at node w1: its Job failed.\nRetry: …", NOW);
        ScaleDown rolledBack = scaleDown();
        scaleDowns.finished(rolledBack, Stage.ROLLED_BACK, Conditions.ROLLED_BACK, "DrainBlocked", "Rolled back because of node w2.", NOW);

        assertThat(health(failed)).isEqualTo(new Health("Degraded", "The upgrade failed at node w1: its Job failed."));
        assertThat(health(rolledBack)).isEqualTo(new Health("Degraded", "Rolled back because of node w2."));
    }

    @Test
    void aPausedOperationIsSuspendedAndOnePausingIsStillProgressing() throws Exception {
        ScaleDown paused = scaleDown();
        scaleDowns.held(paused, new WorkGate.Hold(WorkGate.PAUSED, "spec.paused is true: stopped before the next node.", null, Optional.empty()), NOW);
        ScaleDown pausing = scaleDown();
        pausing.getStatus().setPhase(ScaleDownStatus.Phase.Draining);
        scaleDowns.pausing(pausing, "spec.paused is true: the drain of node w1 finishes first.", NOW);

        assertThat(health(paused)).isEqualTo(new Health("Suspended", "spec.paused is true: stopped before the next node."));
        assertThat(health(pausing).status()).isEqualTo("Progressing");
    }

    @Test
    void anOperationOutsideItsWindowIsProgressingForItGoesOnByItself() throws Exception {
        NodeUpgrade outside = upgrade();
        String opens = "Outside the maintenance window: nothing new starts until it opens on Saturday 02:00 Europe/Berlin.";
        upgrades.held(outside, new WorkGate.Hold(WorkGate.OUTSIDE_WINDOW, opens, null, Optional.empty()), NOW);

        assertThat(outside.getStatus().getPhase()).isEqualTo(NodeUpgradeStatus.Phase.Waiting);
        assertThat(health(outside)).isEqualTo(new Health("Progressing", opens));
    }

    @Test
    void anAuditIsHealthyInSyncOrSkippedDegradedWithFindingsOrErrorsAndSuspendedWhenSuspended() throws Exception {
        Map<VMMapAuditStatus.Phase, String> expected = Map.of(VMMapAuditStatus.Phase.Pending, "Progressing", VMMapAuditStatus.Phase.InSync, "Healthy",
                VMMapAuditStatus.Phase.Skipped, "Healthy", VMMapAuditStatus.Phase.DriftFound, "Degraded", VMMapAuditStatus.Phase.Error, "Degraded",
                VMMapAuditStatus.Phase.Suspended, "Suspended");
        assertThat(expected).as("every phase of an audit").hasSize(VMMapAuditStatus.Phase.values().length);
        for (Map.Entry<VMMapAuditStatus.Phase, String> phase : expected.entrySet()) {
            VMMapAudit audit = observed(new VMMapAudit(), "cluster", new VMMapAuditStatus());
            audit.setSpec(new VMMapAuditSpec());
            audit.getStatus().setPhase(phase.getKey());
            audit.getStatus().setMessage("the audit is " + phase.getKey());

            assertThat(health(audit)).as("phase %s", phase.getKey()).isEqualTo(new Health(phase.getValue(), "the audit is " + phase.getKey()));
        }
    }

    @Test
    void aDrainReportIsHealthyWhileItsPassesRunBlockedNodesOrNotDegradedOnErrorsAndSuspendedWhenSuspended() throws Exception {
        Map<DrainReportStatus.Phase, String> expected = Map.of(DrainReportStatus.Phase.Pending, "Progressing", DrainReportStatus.Phase.Drainable,
                "Healthy", DrainReportStatus.Phase.Blocked, "Healthy", DrainReportStatus.Phase.Error, "Degraded", DrainReportStatus.Phase.Suspended,
                "Suspended");
        assertThat(expected).as("every phase of a report").hasSize(DrainReportStatus.Phase.values().length);
        for (Map.Entry<DrainReportStatus.Phase, String> phase : expected.entrySet()) {
            DrainReport report = observed(new DrainReport(), "nodes", new DrainReportStatus());
            report.getStatus().setPhase(phase.getKey());
            report.getStatus().setMessage("the report is " + phase.getKey());

            assertThat(health(report)).as("phase %s", phase.getKey()).isEqualTo(new Health(phase.getValue(), "the report is " + phase.getKey()));
        }
    }

    @Test
    void withoutTheInterpreterTheTestFailsSayingHowToInstallIt() {
        assertThatThrownBy(() -> health("lua5.1-not-installed", upgrade())).isInstanceOf(AssertionError.class)
                .hasMessageContaining("lua5.1-not-installed is needed").hasMessageContaining("apt-get install lua5.1");
    }

    @Test
    void theDocsShowThisScriptForEachKind() throws IOException {
        String doc = Files.readString(DOC);
        String indented = Files.readString(SCRIPT).lines().map(line -> line.isEmpty() ? "" : "    " + line).reduce("", (a, b) -> a + b + "\n");
        for (String kind : List.of("NodeUpgrade", "ScaleDown", "VMMapAudit", "DrainReport")) {
            assertThat(doc).as("%s's resource.customizations entry in %s, with %s as it is", kind, DOC, SCRIPT)
                    .contains("  resource.customizations.health.nodeops.cks.dev_" + kind + ": |\n" + indented);
        }
    }

    private record Health(String status, String message) {
    }

    private static NodeUpgrade upgrade() {
        return observed(new NodeUpgrade(), "to-1-35", new NodeUpgradeStatus());
    }

    private static ScaleDown scaleDown() {
        return observed(new ScaleDown(), "remove-two", new ScaleDownStatus());
    }

    /** Generation 1, and a status the operator wrote for it. */
    private static <S extends OperationStatus, R extends CustomResource<?, S>> R observed(R resource, String name, S status) {
        resource.setMetadata(new ObjectMetaBuilder().withName(name).withGeneration(1L).build());
        status.setObservedGeneration(1L);
        resource.setStatus(status);
        return resource;
    }

    /** What the script says of the object, serialized as the client sends it to the API server. */
    private static Health health(CustomResource<?, ?> resource) throws IOException, InterruptedException {
        return health(LUA, resource);
    }

    private static Health health(String interpreter, CustomResource<?, ?> resource) throws IOException, InterruptedException {
        JsonNode object = new ObjectMapper().readTree(new KubernetesSerialization().asJson(resource));
        Path harness = Files.createTempFile("argocd-health", ".lua");
        try {
            Files.writeString(harness, "obj = " + lua(object) + "\n"
                    + "local hs = assert(loadfile(" + quote(SCRIPT.toAbsolutePath().toString()) + "))()\n"
                    + "io.write(hs.status, \"\\n\", hs.message or \"\")\n", StandardCharsets.UTF_8);
            Process lua;
            try {
                lua = new ProcessBuilder(interpreter, harness.toString()).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new AssertionError(interpreter + " is needed to run Argo CD's health check as Argo CD would (a Lua 5.1), and it could not be run ("
                        + e.getMessage() + "). Install it: apt-get install lua5.1 (.ci/run does).", e);
            }
            String output = new String(lua.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(lua.waitFor(30, TimeUnit.SECONDS)).as("%s ended", LUA).isTrue();
            assertThat(lua.exitValue()).as("%s on %s: %s", LUA, SCRIPT, output).isZero();
            String[] lines = output.split("\n", 2);
            return new Health(lines[0], lines.length > 1 ? lines[1] : "");
        } finally {
            Files.delete(harness);
        }
    }

    /** A JSON value as a Lua table constructor, as Argo CD hands an object to its scripts (null fields absent). */
    static String lua(JsonNode node) {
        if (node.isObject()) {
            StringJoiner fields = new StringJoiner(", ", "{", "}");
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                if (!field.getValue().isNull()) {
                    fields.add("[" + quote(field.getKey()) + "] = " + lua(field.getValue()));
                }
            }
            return fields.toString();
        }
        if (node.isArray()) {
            StringJoiner items = new StringJoiner(", ", "{", "}");
            node.forEach(item -> items.add(lua(item)));
            return items.toString();
        }
        if (node.isNumber() || node.isBoolean()) {
            return node.asText();
        }
        return node.isNull() ? "nil" : quote(node.asText());
    }

    /** A Lua string literal: backslash, quote and control characters escaped (Lua 5.1 has decimal escapes only). */
    private static String quote(String text) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '\\' || c == '"') {
                quoted.append('\\').append(c);
            } else if (c < 0x20) {
                // Three digits always: "\\10" followed by a digit would read as another character.
                quoted.append(String.format("\\%03d", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }
}
