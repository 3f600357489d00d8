package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.testing.RecordingEvents;
import dev.cks.nodeops.testing.RecordingEvents.RecordedEvent;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** One DrainReport's passes over readings of a cluster that change between them, with its events, status and series. */
class DrainabilityPassTest {
    private final ManualTime time = new ManualTime();
    private final RecordingEvents events = new RecordingEvents();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DrainabilityMetrics metrics = new DrainabilityMetrics(registry);
    private Supplier<ClusterReader.Read> cluster;
    private final DrainReport report = report();

    private static DrainReport report() {
        DrainReport report = new DrainReport();
        report.setMetadata(new ObjectMetaBuilder().withName("nodes").withGeneration(1L).build());
        report.setSpec(new DrainReportSpec());
        report.getSpec().setIntervalSeconds(60);
        return report;
    }

    private DrainabilityPass.Outcome pass() {
        DrainabilityPass.Outcome outcome = new DrainabilityPass(time, () -> cluster.get(), events, metrics).run(report);
        report.setStatus(outcome.status());
        time.advance(Duration.ofSeconds(60));
        return outcome;
    }

    private void reads(ClusterShapes shape) {
        cluster = () -> new ClusterReader.Read(shape.reading(), 3);
    }

    private Optional<Double> drainable(String node) {
        return Optional.ofNullable(registry.find(DrainabilityMetrics.DRAINABLE).tags("report", "nodes", "node", node).gauge()).map(Gauge::value);
    }

    @Test
    void announcesEachChangeOnceExportsEveryNodeAndForgetsNodesThatGo() {
        reads(new ClusterShapes().workers("w-1", "w-2", "w-3").barePod("debug", "w-1"));

        DrainabilityPass.Outcome first = pass();

        assertThat(first.rescheduleAfter()).contains(Duration.ofSeconds(60));
        DrainReportStatus status = first.status();
        assertThat(status.getPhase()).isEqualTo(DrainReportStatus.Phase.Blocked);
        assertThat(status.getBlockedCount()).isEqualTo(1);
        assertThat(status.getDrainableCount()).isEqualTo(2);
        assertThat(status.getBlockedNodes()).extracting(BlockedNode::getName).containsExactly("w-1");
        assertThat(status.getLastRun().getApiRequests()).isEqualTo(3);
        assertThat(status.getMessage()).isEqualTo("1 of 3 nodes could not be drained now: w-1.");
        assertThat(Conditions.find(status.getConditions(), Conditions.DRAINABLE)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("NodesBlocked");
        });
        assertThat(events.drain()).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo("Warning");
            assertThat(e.reason()).isEqualTo(DrainabilityPass.UNDRAINABLE_EVENT);
            assertThat(e.message()).startsWith("Node w-1 could not be drained now: cannot delete pods that no controller manages")
                    .contains("shop/debug");
        });
        assertThat(drainable("w-1")).contains(0.0);
        assertThat(drainable("w-2")).contains(1.0);

        pass();
        assertThat(events.drain()).as("the same block is not announced again").isEmpty();

        reads(new ClusterShapes().workers("w-1", "w-2"));
        DrainabilityPass.Outcome cleared = pass();

        assertThat(cleared.status().getPhase()).isEqualTo(DrainReportStatus.Phase.Drainable);
        assertThat(cleared.status().getBlockedNodes()).isEmpty();
        assertThat(Conditions.isTrue(cleared.status().getConditions(), Conditions.DRAINABLE)).isTrue();
        assertThat(events.drain()).extracting(RecordedEvent::type, RecordedEvent::reason)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("Normal", DrainabilityPass.DRAINABLE_EVENT));
        assertThat(drainable("w-1")).contains(1.0);
        assertThat(drainable("w-3")).as("a node that is gone has no series").isEmpty();
    }

    @Test
    void moreChangesThanEventsPerPassAreSummedUpInOneEvent() {
        report.getSpec().setMaxEventsPerRun(2);
        reads(new ClusterShapes().workers("w-1", "w-2", "w-3", "w-4").barePod("a", "w-1").barePod("b", "w-2").barePod("c", "w-3")
                .barePod("d", "w-4"));

        pass();

        List<RecordedEvent> announced = events.drain();
        assertThat(announced).hasSize(3);
        assertThat(announced.get(2).message()).startsWith("2 more nodes became undrainable and 0 more drainable again");
    }

    @Test
    void anUnreadableClusterKeepsTheLastVerdictsAndASuspendedReportExportsNothing() {
        reads(new ClusterShapes().workers("w-1").barePod("debug", "w-1"));
        pass();
        events.drain();
        cluster = () -> {
            throw new KubernetesClientException("pods is forbidden", 403, null);
        };

        DrainabilityPass.Outcome unreadable = pass();

        assertThat(unreadable.status().getPhase()).isEqualTo(DrainReportStatus.Phase.Error);
        assertThat(unreadable.status().getBlockedNodes()).extracting(BlockedNode::getName).containsExactly("w-1");
        assertThat(Conditions.find(unreadable.status().getConditions(), Conditions.DRAINABLE)).get()
                .satisfies(c -> assertThat(c.getReason()).isEqualTo(DrainabilityPass.READ_FAILED));
        assertThat(unreadable.status().getMessage()).contains("HTTP 403");
        assertThat(unreadable.rescheduleAfter()).contains(Duration.ofSeconds(60));
        assertThat(events.drain()).isEmpty();

        report.getSpec().setSuspend(true);
        DrainabilityPass.Outcome suspended = pass();

        assertThat(suspended.status().getPhase()).isEqualTo(DrainReportStatus.Phase.Suspended);
        assertThat(suspended.rescheduleAfter()).isEmpty();
        assertThat(drainable("w-1")).isEmpty();
    }

    @Test
    void aWakeSoonAfterAPassWaitsForTheRestOfTheGapAndASpecChangeDoesNot() {
        reads(new ClusterShapes().workers("w-1"));
        DrainabilityPass runner = new DrainabilityPass(time, () -> cluster.get(), events, metrics);
        report.setStatus(runner.run(report).status());
        time.advance(Duration.ofSeconds(4));

        DrainabilityPass.Outcome woken = runner.run(report);

        assertThat(woken.deferred()).isTrue();
        assertThat(woken.rescheduleAfter()).contains(DrainabilityPass.MIN_BETWEEN_PASSES.minusSeconds(4));

        report.getMetadata().setGeneration(2L);
        DrainabilityPass.Outcome edited = runner.run(report);
        assertThat(edited.deferred()).isFalse();
        assertThat(edited.status().getObservedGeneration()).isEqualTo(2L);
    }

    @Test
    void aPodSelectorThatCannotBeParsedIsRefusedWithTheFieldNamed() {
        reads(new ClusterShapes().workers("w-1"));
        report.getSpec().getDrain().setPodSelector("app in (web");

        DrainabilityPass.Outcome refused = pass();

        assertThat(Conditions.find(refused.status().getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getMessage()).startsWith("spec.drain.podSelector cannot be parsed");
        });
        assertThat(refused.rescheduleAfter()).isEmpty();
    }

    /**
     * Shape: two workers of pool a. Actor: a person whose DrainReport (written for the last release) still selects with the
     * deprecated spec.nodeSelector: it reports as before, with one Warning per spec (not per pass) spelling out the move, and
     * its Accepted condition says it meanwhile; once moved to spec.selector, the condition is plain again.
     */
    @Test
    void theDeprecatedNodeSelectorStillSelectsWithOneWarningPerSpec() {
        reads(new ClusterShapes().workers("w-1", "w-2"));
        report.getSpec().setNodeSelector(java.util.Map.of("pool", "a"));

        DrainReportStatus first = pass().status();
        pass();

        assertThat(first.getNodeCount()).isEqualTo(2);
        assertThat(events.drain()).filteredOn(e -> e.reason().equals(dev.cks.nodeops.upgrade.NodeSelection.DEPRECATED_NODE_SELECTOR)).singleElement()
                .satisfies(e -> {
                    assertThat(e.type()).isEqualTo("Warning");
                    assertThat(e.message()).startsWith("DrainReport nodes selects its nodes with spec.nodeSelector, which is deprecated")
                            .contains("Write spec.selector: {matchLabels: {pool: a}} instead");
                });
        assertThat(Conditions.find(report.getStatus().getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo(dev.cks.nodeops.upgrade.NodeSelection.DEPRECATED_NODE_SELECTOR);
        });

        report.getSpec().setNodeSelector(null);
        report.getSpec().setSelector(new io.fabric8.kubernetes.api.model.LabelSelector(null, java.util.Map.of("pool", "a")));
        report.getMetadata().setGeneration(2L);
        DrainReportStatus moved = pass().status();

        assertThat(moved.getNodeCount()).isEqualTo(2);
        assertThat(events.drain()).noneMatch(e -> e.reason().equals(dev.cks.nodeops.upgrade.NodeSelection.DEPRECATED_NODE_SELECTOR));
        assertThat(Conditions.find(moved.getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> assertThat(c.getReason()).isEqualTo("Valid"));
    }

    /**
     * Shape: two workers, a Deployment's pod and a bare pod (no labels) on w-1. Actor: a person whose DrainReport assumes
     * drains that leave unlabelled pods alone, first with the deprecated spec.drain.podSelector, then moved to
     * spec.drain.selector: both leave the bare pod out (w-1 is drainable); the deprecated one with one Warning per spec
     * spelling out the move, and its Accepted condition says it meanwhile.
     */
    @Test
    void theDeprecatedPodSelectorStillSelectsWithOneWarningPerSpecAndTheSelectorSelectsTheSame() {
        reads(new ClusterShapes().workers("w-1", "w-2").deploymentPod("web", "web-1", "w-1").barePod("debug", "w-1"));
        report.getSpec().getDrain().setPodSelector("app");

        DrainReportStatus first = pass().status();
        pass();

        assertThat(first.getBlockedCount()).as("the bare pod is not selected, so it blocks nothing").isZero();
        assertThat(events.drain()).filteredOn(e -> e.reason().equals(dev.cks.nodeops.drain.PodSelection.DEPRECATED_POD_SELECTOR)).singleElement()
                .satisfies(e -> {
                    assertThat(e.type()).isEqualTo("Warning");
                    assertThat(e.message()).startsWith("DrainReport nodes selects the pods to drain with spec.drain.podSelector 'app'")
                            .contains("Write spec.drain.selector: {matchExpressions: [{key: app, operator: Exists}]} instead").endsWith(", in one edit.");
                });
        assertThat(Conditions.find(report.getStatus().getConditions(), Conditions.ACCEPTED)).get()
                .satisfies(c -> assertThat(c.getReason()).isEqualTo(dev.cks.nodeops.drain.PodSelection.DEPRECATED_POD_SELECTOR));

        report.getSpec().getDrain().setPodSelector("");
        report.getSpec().getDrain().setSelector(new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().addNewMatchExpression().withKey("app")
                .withOperator("Exists").endMatchExpression().build());
        report.getMetadata().setGeneration(2L);
        DrainReportStatus moved = pass().status();

        assertThat(moved.getBlockedCount()).isZero();
        assertThat(moved.getDrainableCount()).isEqualTo(2);
        assertThat(events.drain()).noneMatch(e -> e.reason().equals(dev.cks.nodeops.drain.PodSelection.DEPRECATED_POD_SELECTOR));
        assertThat(Conditions.find(moved.getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> assertThat(c.getReason()).isEqualTo("Valid"));

        report.getSpec().getDrain().setSelector(null);
        report.getMetadata().setGeneration(3L);
        assertThat(pass().status().getBlockedNodes()).as("without a selector the bare pod blocks w-1").extracting(BlockedNode::getName)
                .containsExactly("w-1");
    }
}
