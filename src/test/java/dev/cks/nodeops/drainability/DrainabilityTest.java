package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drainability.Drainability.Cause;
import dev.cks.nodeops.drainability.Drainability.Verdict;
import dev.cks.nodeops.upgrade.NodeSelection;

class DrainabilityTest {
    private static final Instant NOW = Instant.parse("2026-12-03T10:00:00Z");

    private static Map<String, Verdict> assess(ClusterShapes cluster, Map<String, String> selector, DrainAssumptions assumptions) {
        return Drainability.assess(cluster.reading(), NodeSelection.matchLabels(selector), assumptions.toDrainOptions(), NOW).stream()
                .collect(Collectors.toMap(Verdict::node, Function.identity()));
    }

    @Test
    void eachNodeIsBlockedByWhatWouldStopItsDrainAndOnlyThat() {
        ClusterShapes cluster = new ClusterShapes().workers("w-1", "w-2", "w-3", "w-5", "w-6", "w-7").optedOut("w-4", "disk swap on Friday")
                .deploymentPod("web", "web-1", "w-1").deploymentPod("web", "web-2", "w-2").budget("web-pdb", "web", 2, 0)
                .daemonSetPod("agent-1", "w-1")
                .barePod("debug", "w-3")
                .emptyDirPod("cache", "cache-1", "w-5")
                .pinnedPod("db", "db-1", "w-6").pinnedPod("db", "db-2", "w-6").budget("db-pdb", "db", 2, 1)
                .deploymentPod("api", "api-1", "w-7");

        Map<String, Verdict> verdicts = assess(cluster, Map.of(), new DrainAssumptions());

        assertThat(verdicts.get("w-1").causes()).containsExactly(Cause.PodDisruptionBudget);
        assertThat(verdicts.get("w-1").reasons()).singleElement().asString()
                .startsWith("pdb shop/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed").contains("1 on w-1");
        assertThat(verdicts.get("w-2").causes()).containsExactly(Cause.PodDisruptionBudget);
        assertThat(verdicts.get("w-3").causes()).containsExactly(Cause.BarePod);
        assertThat(verdicts.get("w-3").reasons()).singleElement().asString().contains("shop/debug").contains("force: true");
        assertThat(verdicts.get("w-4").causes()).containsExactly(Cause.OptedOut);
        assertThat(verdicts.get("w-4").reasons()).singleElement().asString().contains("disk swap on Friday");
        assertThat(verdicts.get("w-5").drainable()).as("emptyDir data goes by default, as in an operation").isTrue();
        assertThat(verdicts.get("w-6").causes()).containsExactly(Cause.NoRoomForReplacements);
        assertThat(verdicts.get("w-6").reasons()).singleElement().asString().contains("Deployment shop/db").contains("can be scheduled");
        assertThat(verdicts.get("w-7").drainable()).as("a pod under no budget goes at once").isTrue();
        assertThat(verdicts.get("w-7").reasons()).isEmpty();
    }

    @Test
    void theAssumedDrainOptionsDecideWhatBlocksAsTheyWouldInAnOperation() {
        ClusterShapes cluster = new ClusterShapes().workers("w-1", "w-2").emptyDirPod("cache", "cache-1", "w-1").barePod("debug", "w-2")
                .daemonSetPod("agent-2", "w-2");
        DrainAssumptions strict = new DrainAssumptions();
        strict.setDeleteEmptyDirData(false);
        strict.setIgnoreDaemonSets(false);
        strict.setForce(true);

        Map<String, Verdict> verdicts = assess(cluster, Map.of(), strict);

        assertThat(verdicts.get("w-1").causes()).containsExactly(Cause.LocalStorage);
        assertThat(verdicts.get("w-2").causes()).as("force lets the bare pod go; the DaemonSet pod now blocks").containsExactly(Cause.DaemonSet);
    }

    @Test
    void onlySelectedNodesAreReportedInNameOrder() {
        ClusterShapes cluster = new ClusterShapes().workers("w-2", "w-1");
        cluster.nodes.add(dev.cks.nodeops.testing.TestNodes.node("other").label("pool", "b").build());

        assertThat(Drainability.assess(cluster.reading(), NodeSelection.matchLabels(Map.of("pool", "a")), new DrainOptions(), NOW)).extracting(Verdict::node)
                .containsExactly("w-1", "w-2");
        assertThat(Drainability.assess(cluster.reading(), NodeSelection.everything(), new DrainOptions(), NOW)).hasSize(3);
    }

    @Test
    void aDeploymentIsNamedFromItsReplicaSetsNameWithoutReadingIt() {
        ClusterShapes cluster = new ClusterShapes().workers("w-1").deploymentPod("web", "web-1", "w-1").daemonSetPod("agent-1", "w-1")
                .barePod("debug", "w-1");

        assertThat(cluster.pods.stream().map(Drainability::workloadOf).toList())
                .containsExactly("Deployment shop/web", "DaemonSet shop/agent", "pod shop/debug");
    }

    @Test
    void aNodeWithSeveralBlockersNamesEachCauseOnce() {
        ClusterShapes cluster = new ClusterShapes().optedOut("w-1", "true").barePod("a", "w-1").barePod("b", "w-1");

        Verdict verdict = assess(cluster, Map.of(), new DrainAssumptions()).get("w-1");

        assertThat(verdict.causes()).isEqualTo(Set.of(Cause.OptedOut, Cause.BarePod));
        assertThat(verdict.reasons()).hasSize(3);
        assertThat(List.copyOf(verdict.causes())).as("in the enum's order").containsExactly(Cause.OptedOut, Cause.BarePod);
    }
}
