package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainBed;
import dev.cks.nodeops.drainability.Drainability.Cause;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The packaged operator reports on 20 KWOK workers of a pool of their own (the report's nodeSelector): a Deployment
 * of 2 replicas pinned to 2 of them, one per node, under a PodDisruptionBudget that allows no disruption; a bare pod
 * on a third; a fourth opted out of node operations; 16 with nothing in the way. Other classes' nodes and pods on
 * the same bed are outside the pool. The report names exactly those 4 nodes with their causes within one interval,
 * announces each once, exports {@code cks_node_drainable} per node, flips each back within one interval once its
 * blocker is gone, forgets the series of a node that is deleted, and evicts, deletes and cordons nothing itself.
 */
@ExtendWith(TestBedExtension.class)
class DrainReportIT {
    private static final String REPORT = "drr-pool";
    private static final int INTERVAL_SECONDS = 10;
    /** One interval, and the time a pass and its status write take on a busy 2-CPU bed. */
    private static final Duration ONE_INTERVAL = Duration.ofSeconds(INTERVAL_SECONDS + 15);
    private static final Pattern DRAINABLE_LINE = Pattern.compile("^cks_node_drainable\\{([^}]*)}\\s+(\\S+)$");

    private KubernetesClient client;
    private DrainBed pool;
    private OperatorProcess operator;

    @AfterEach
    void tearDown() {
        if (operator != null) {
            operator.close();
        }
        if (client != null) {
            client.resources(DrainReport.class).withName(REPORT).delete();
            client.v1().events().inNamespace("default").withField("involvedObject.name", REPORT).delete();
        }
        if (pool != null) {
            pool.cleanUp();
        }
    }

    @Test
    void namesExactlyTheBlockedNodesWithTheirCausesAndFlipsThemBackWithinAnInterval(TestBed bed) throws Exception {
        client = bed.client();
        pool = new DrainBed(bed, "drr");
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            nodes.add(pool.addWorker("drr"));
        }
        String pinnedA = nodes.get(0);
        String pinnedB = nodes.get(1);
        String withBarePod = nodes.get(2);
        String optedOut = nodes.get(3);
        pinnedDeployment("pinned", List.of(pinnedA, pinnedB));
        pool.budget("pinned-pdb", "pinned", 2, null);
        pool.awaitReadyPods("pinned", 2);
        pool.awaitBudget("pinned-pdb", 2, 2);
        assertThat(pool.podsOn(pinnedA)).as("one pinned replica per node").hasSize(1);
        pool.barePod("bare", withBarePod, List.of());
        pool.awaitReadyPods("bare", 1);
        annotate(optedOut, NodeAnnotations.EXCLUDE, "\"disk swap on Friday\"");
        Map<String, String> podUids = podUids();

        operator = OperatorProcess.start(bed, "drainreport", Map.of());
        client.resource(report()).create();
        Instant created = Instant.now();

        DrainReportStatus blocked = await("the first pass names the 4 blocked nodes", created,
                status -> status.getBlockedCount() != null && status.getBlockedCount() == 4);
        assertThat(blocked.getNodeCount()).isEqualTo(20);
        assertThat(blocked.getDrainableCount()).isEqualTo(16);
        assertThat(blocked.getPhase()).isEqualTo(DrainReportStatus.Phase.Blocked);
        Map<String, BlockedNode> byName = blocked.getBlockedNodes().stream().collect(Collectors.toMap(BlockedNode::getName, n -> n));
        assertThat(byName.keySet()).containsExactlyInAnyOrder(pinnedA, pinnedB, withBarePod, optedOut);
        for (String pinned : List.of(pinnedA, pinnedB)) {
            assertThat(byName.get(pinned).getCauses()).containsExactly(Cause.PodDisruptionBudget);
            assertThat(byName.get(pinned).getReasons()).singleElement().asString()
                    .startsWith("pdb " + pool.namespace + "/pinned-pdb: needs 2 healthy, has 2, 0 disruptions allowed").contains("1 on " + pinned);
        }
        assertThat(byName.get(withBarePod).getCauses()).containsExactly(Cause.BarePod);
        assertThat(byName.get(withBarePod).getReasons()).singleElement().asString().contains(pool.namespace + "/bare").contains("force: true");
        assertThat(byName.get(optedOut).getCauses()).containsExactly(Cause.OptedOut);
        assertThat(byName.get(optedOut).getReasons()).singleElement().asString().contains("disk swap on Friday");
        assertThat(blocked.getLastRun().getApiRequests()).as("one list each of nodes, pods and budgets (pages of 500)").isBetween(3, 12);
        assertThat(Conditions.find(blocked.getConditions(), Conditions.DRAINABLE)).get().satisfies(c -> assertThat(c.getStatus()).isEqualTo("False"));
        assertThat(drainableSeries()).as("cks_node_drainable of the pool's nodes").hasSize(20).containsEntry(pinnedA, 0.0)
                .containsEntry(withBarePod, 0.0).containsEntry(optedOut, 0.0).containsEntry(nodes.get(19), 1.0);

        // Two more passes find the same: nothing is announced again.
        awaitPassAfter(Instant.now());
        awaitPassAfter(Instant.now());
        assertThat(events(DrainabilityPass.UNDRAINABLE_EVENT)).as("one Warning per blocked node, once").hasSize(4)
                .allSatisfy(e -> assertThat(e.getType()).isEqualTo("Warning"));

        // The blockers go: the bare pod is deleted, the opt-out removed, the budget deleted.
        client.pods().inNamespace(pool.namespace).withName("bare").withGracePeriod(0).delete();
        annotate(optedOut, NodeAnnotations.EXCLUDE, "null");
        client.policy().v1().podDisruptionBudget().inNamespace(pool.namespace).withName("pinned-pdb").delete();
        Awaitility.await("the bare pod is gone").atMost(Duration.ofSeconds(30)).until(() -> pool.podsOn(withBarePod).isEmpty());
        Instant cleared = Instant.now();

        DrainReportStatus drainable = await("every node drainable again", cleared, status -> status.getBlockedCount() == 0);
        assertThat(drainable.getPhase()).isEqualTo(DrainReportStatus.Phase.Drainable);
        assertThat(drainable.getDrainableCount()).isEqualTo(20);
        assertThat(events(DrainabilityPass.DRAINABLE_EVENT)).as("one Normal event per node drainable again").hasSize(4)
                .extracting(Event::getMessage).allSatisfy(m -> assertThat(m).contains("could be drained again"));
        assertThat(drainableSeries().values()).containsOnly(1.0);

        // A node that goes loses its series at the next pass.
        String leaving = nodes.get(19);
        client.nodes().withName(leaving).delete();
        await("the deleted node is no longer counted", Instant.now(), status -> status.getNodeCount() == 19);
        assertThat(drainableSeries()).hasSize(19).doesNotContainKey(leaving);

        // It only read: the same pods (no eviction, no delete but ours), and no node cordoned.
        Map<String, String> podsNow = podUids();
        podsNow.keySet().retainAll(podUids.keySet());
        podUids.remove(pool.namespace + "/bare");
        assertThat(podsNow).isEqualTo(podUids);
        assertThat(nodes.subList(0, 19)).allSatisfy(n -> assertThat(client.nodes().withName(n).get().getSpec().getUnschedulable()).isNotEqualTo(true));
    }

    private DrainReport report() {
        DrainReport report = new DrainReport();
        report.setMetadata(new ObjectMetaBuilder().withName(REPORT).build());
        DrainReportSpec spec = new DrainReportSpec();
        spec.setSelector(new LabelSelector(null, Map.of(DrainBed.POOL_LABEL, pool.namespace)));
        spec.setIntervalSeconds(INTERVAL_SECONDS);
        report.setSpec(spec);
        return report;
    }

    /** 2 replicas that may run only on these nodes, one per node (a hard spread over the nodes they may use). */
    private void pinnedDeployment(String name, List<String> pinnedTo) {
        PodSpec spec = new PodSpecBuilder(pool.podSpec(false)).withNewAffinity().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm().addNewMatchExpression().withKey("kubernetes.io/hostname").withOperator("In").withValues(pinnedTo)
                .endMatchExpression().endNodeSelectorTerm().endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().endAffinity()
                .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("kubernetes.io/hostname").withWhenUnsatisfiable("DoNotSchedule")
                .withNewLabelSelector().addToMatchLabels("app", name).endLabelSelector().endTopologySpreadConstraint().build();
        client.apps().deployments().inNamespace(pool.namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withReplicas(pinnedTo.size()).withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withSpec(spec).endTemplate()
                .endSpec().build()).create();
    }

    private void annotate(String node, String key, String jsonValue) {
        client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + key + "\":" + jsonValue + "}}}");
    }

    private DrainReportStatus status() {
        DrainReport report = client.resources(DrainReport.class).withName(REPORT).get();
        return report == null ? null : report.getStatus();
    }

    /** Waits for a pass that started after {@code since} and whose status matches, at most one interval after {@code since}. */
    private DrainReportStatus await(String what, Instant since, Predicate<DrainReportStatus> matches) {
        Instant notBefore = since.minusSeconds(1);
        Awaitility.await(what).atMost(ONE_INTERVAL).pollInterval(Duration.ofMillis(500)).until(() -> {
            DrainReportStatus status = status();
            return status != null && status.getLastRun() != null && Timestamps.parse(status.getLastRun().getStartedAt()).isAfter(notBefore)
                    && matches.test(status);
        });
        return status();
    }

    private void awaitPassAfter(Instant since) {
        await("a pass after " + since, since, status -> true);
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace("default").withField("involvedObject.name", REPORT).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason())).toList();
    }

    private Map<String, String> podUids() {
        Map<String, String> uids = new TreeMap<>();
        for (Pod pod : client.pods().inNamespace(pool.namespace).list().getItems()) {
            uids.put(pool.namespace + "/" + pod.getMetadata().getName(), pod.getMetadata().getUid());
        }
        return uids;
    }

    /** Node → value of this report's {@code cks_node_drainable} series on the operator's /q/metrics. */
    private Map<String, Double> drainableSeries() throws java.io.IOException {
        Map<String, Double> series = new LinkedHashMap<>();
        for (String line : operator.httpGet("/q/metrics").lines().toList()) {
            Matcher sample = DRAINABLE_LINE.matcher(line.strip());
            if (!sample.matches()) {
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            Pattern.compile("(\\w+)=\"([^\"]*)\"").matcher(sample.group(1)).results().forEach(m -> labels.put(m.group(1), m.group(2)));
            if (REPORT.equals(labels.get("report"))) {
                series.put(labels.get("node"), Double.parseDouble(sample.group(2)));
            }
        }
        return series;
    }
}
