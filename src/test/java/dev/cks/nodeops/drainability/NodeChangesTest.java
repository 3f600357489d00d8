package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeCache;
import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;

class NodeChangesTest {
    private static DrainReport report(String name, Map<String, String> selector) {
        DrainReport report = new DrainReport();
        report.setMetadata(new ObjectMetaBuilder().withName(name).build());
        report.setSpec(new DrainReportSpec());
        report.getSpec().setSelector(new LabelSelector(null, selector));
        return report;
    }

    @Test
    void onlyAnOptOutACordonOrALabelChangesWhatAReportSeesOfANode() {
        Node node = TestNodes.node("w-1").label("pool", "a").build();
        Node heartbeat = new NodeBuilder(node).editStatus().editFirstCondition().withLastHeartbeatTime("2026-12-03T10:00:00Z").endCondition()
                .endStatus().build();

        assertThat(NodeChanges.Seen.of(heartbeat)).isEqualTo(NodeChanges.Seen.of(node));
        assertThat(NodeChanges.Seen.of(NodeCache.pruned(node))).as("the cache's pruned Node reads the same").isEqualTo(NodeChanges.Seen.of(node));
        assertThat(NodeChanges.Seen.of(TestNodes.node("w-1").label("pool", "a").annotation(NodeAnnotations.EXCLUDE, "true").build()))
                .isNotEqualTo(NodeChanges.Seen.of(node));
        assertThat(NodeChanges.Seen.of(TestNodes.node("w-1").label("pool", "a").unschedulable().build())).isNotEqualTo(NodeChanges.Seen.of(node));
        assertThat(NodeChanges.Seen.of(TestNodes.node("w-1").label("pool", "b").build())).isNotEqualTo(NodeChanges.Seen.of(node));
    }

    @Test
    void aNodeWakesTheReportsThatSelectIt() {
        Node node = TestNodes.node("w-1").label("pool", "a").build();

        assertThat(NodeChanges.concerned(node, Stream.of(report("all", Map.of()), report("pool-a", Map.of("pool", "a")),
                report("pool-b", Map.of("pool", "b"))))).extracting(ResourceID::getName).containsExactly("all", "pool-a");
    }
}
