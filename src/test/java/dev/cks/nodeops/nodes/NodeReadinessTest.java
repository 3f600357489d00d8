package dev.cks.nodeops.nodes;

import dev.cks.nodeops.testing.TestNodes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

class NodeReadinessTest {
    static Node node(String name, String ready, String version) {
        return TestNodes.node(name).ready(ready).version(version).build();
    }

    @Test
    void readyOnlyWhenTheReadyConditionIsTrue() {
        assertThat(NodeReadiness.isReady(node("n", "True", "v1.35.4"))).isTrue();
        assertThat(NodeReadiness.state(node("n", "False", "v1.35.4"))).isEqualTo(NodeReadiness.State.NOT_READY);
        assertThat(NodeReadiness.state(node("n", "Unknown", "v1.35.4"))).isEqualTo(NodeReadiness.State.UNKNOWN);
        assertThat(NodeReadiness.state(node("n", null, "v1.35.4"))).isEqualTo(NodeReadiness.State.UNKNOWN);
        assertThat(NodeReadiness.state(null)).isEqualTo(NodeReadiness.State.REMOVED);
        assertThat(NodeReadiness.isReady(null)).isFalse();
    }

    @Test
    void versionIsTheKubeletVersion() {
        assertThat(NodeReadiness.kubeletVersion(node("n", "True", "v1.35.4"))).isEqualTo("v1.35.4");
        assertThat(NodeReadiness.kubeletVersion(new NodeBuilder().build())).isNull();
    }
}
