package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.testing.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;

class VersionSkewTest {
    private static final String T0 = "2026-01-01T00:00:00Z";

    private static List<UpgradeNodeStatus> plan(List<Node> nodes, Map<String, String> selector, String target) {
        return UpgradePlan.plan(nodes, NodeSelection.matchLabels(selector), target);
    }

    @Test
    void workersMayNotGoAboveTheApiServerButMayCatchUpWithIt() {
        List<Node> nodes = List.of(node("cp", true, T0, "v1.34.2", true), node("w1", false, T0, "v1.33.9", true));
        Map<String, String> workers = Map.of("kubernetes.io/hostname", "w1");

        assertThat(VersionSkew.refusal(plan(nodes, workers, "v1.35.0"), nodes, List.of("v1.34.2"), "v1.35.0")).get().asString()
                .startsWith("Refused by the Kubernetes version skew policy: \"kubelet must not be newer than kube-apiserver")
                .contains("the API server is at v1.34.2 and this NodeUpgrade does not upgrade the control plane")
                .contains("Nothing was cordoned");
        assertThat(VersionSkew.refusal(plan(nodes, workers, "v1.34.9"), nodes, List.of("v1.34.2"), "v1.34.9"))
                .as("a newer patch of the same minor is within the policy").isEmpty();
        assertThat(VersionSkew.refusal(plan(nodes, workers, "v1.34.2"), nodes, List.of("v1.34.2"), "v1.34.2")).isEmpty();
    }

    @Test
    void theOldestApiServerDecides() {
        List<Node> nodes = List.of(node("cp", true, T0, "v1.35.0", true), node("w1", false, T0, "v1.34.2", true));
        assertThat(VersionSkew.refusal(plan(nodes, Map.of("kubernetes.io/hostname", "w1"), "v1.35.0"), nodes, List.of("v1.35.0", "v1.34.2"), "v1.35.0"))
                .as("an HA control plane half-way through its upgrade").isPresent();
    }

    @Test
    void anUpgradeOfTheControlPlaneGoesOneMinorAtATime() {
        List<Node> nodes = List.of(node("cp", true, T0, "v1.33.2", true), node("w1", false, T0, "v1.33.2", true));

        assertThat(VersionSkew.refusal(plan(nodes, Map.of(), "v1.34.1"), nodes, List.of("v1.33.2"), "v1.34.1")).isEmpty();
        assertThat(VersionSkew.refusal(plan(nodes, Map.of(), "v1.35.0"), nodes, List.of("v1.33.2"), "v1.35.0")).get().asString()
                .contains("is 2 minor versions above it").contains("kubeadm upgrades the control plane one minor version at a time")
                .contains("Upgrade to 1.34 first");
    }

    @Test
    void nodesLeftBehindMayNotFallMoreThanThreeMinorsBehindTheUpgradedApiServer() {
        List<Node> nodes = List.of(node("cp", true, T0, "v1.34.2", true), node("w-old", false, T0, "v1.31.9", true),
                node("w-ok", false, T0, "v1.32.0", true));
        Map<String, String> controlPlaneOnly = Map.of("kubernetes.io/hostname", "cp");

        assertThat(VersionSkew.refusal(plan(nodes, controlPlaneOnly, "v1.35.0"), nodes, List.of("v1.34.2"), "v1.35.0")).get().asString()
                .contains("may be up to three minor versions older")
                .contains("the API server would be at v1.35 while nodes this NodeUpgrade does not upgrade stay too far behind: w-old (v1.31.9)")
                .doesNotContain("w-ok");
    }

    @Test
    void withoutAKnownApiServerVersionNothingIsJudged() {
        List<Node> nodes = List.of(node("w1", false, T0, "v1.33.2", true));
        assertThat(VersionSkew.refusal(plan(nodes, Map.of(), "v1.40.0"), nodes, List.of("not-a-version"), "v1.40.0")).isEmpty();
    }
}
