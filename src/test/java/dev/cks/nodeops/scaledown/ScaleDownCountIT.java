package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoField;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/** spec.count with FewestPods picks the workers with the fewest evictable pods, the newest first among equals. */
class ScaleDownCountIT extends ScaleDownScenario {
    private static final String SLOT_LABEL = "scaledown-test.nodeops.cks.dev/slot";

    ScaleDownCountIT() {
        super("sdn", "CloudManaged");
    }

    @Test
    void countTwoPicksTheEmptyWorkersNewestFirst() {
        String twoPods = slot(world.addWorker(pool), "two");
        String olderEmpty = slot(world.addWorker(pool), "older");
        String onePod = slot(world.addWorker(pool), "one");
        // creationTimestamp has whole seconds: the newest empty worker must be created in a later second to be the newer one.
        Instant olderCreated = ScaleDownTargets.createdAt(world.client.nodes().withName(olderEmpty).get());
        Awaitility.await("a new second after " + olderCreated).atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(50))
                .until(() -> Instant.now().truncatedTo(ChronoUnit.SECONDS).isAfter(olderCreated));
        String newestEmpty = slot(world.addWorker(pool), "newest");
        pinned("two", 2);
        pinned("one", 1);
        pool.awaitReadyPods("two", 2);
        pool.awaitReadyPods("one", 1);
        assertThat(ScaleDownTargets.createdAt(world.client.nodes().withName(newestEmpty).get()))
                .as("the two empty workers were created in different seconds, so 'newest first' decides")
                .isAfter(ScaleDownTargets.createdAt(world.client.nodes().withName(olderEmpty).get()));

        world.create(pool.namespace, null, 2, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown done = world.awaitPhase(pool.namespace, ScaleDownStatus.Phase.Succeeded, Duration.ofSeconds(120));

        assertThat(done.getStatus().getTargetNodes()).containsExactly(newestEmpty, olderEmpty);
        assertThat(world.bed.tool("kubectl", "get", "scaledown", done.getMetadata().getName()).lines().toList().get(1))
                .as("kubectl get: the NODES column lists both").contains("[\"" + newestEmpty + "\",\"" + olderEmpty + "\"]");
        assertThat(world.isUnschedulable(twoPods)).isFalse();
        assertThat(world.isUnschedulable(onePod)).isFalse();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids").split(","))
                        .containsExactlyInAnyOrder(world.fixture.vmId(newestEmpty), world.fixture.vmId(olderEmpty)));
    }

    /**
     * Two ScaleDowns of two workers each, created in the same second on a cluster of three workers: only
     * one goes on; the other is refused naming it, touching nothing; a schedulable worker remains.
     */
    @Test
    void twoScaleDownsOfTwoWorkersEachCreatedTogetherLeaveAWorkerAndTheRefusalNamesTheOther() {
        List<String> workers = List.of(world.addWorker(pool), world.addWorker(pool), world.addWorker(pool));
        String other = name + "-b";
        try {
            // Both are sent early in a second, so that the API server stamps them with the same one.
            Awaitility.await("the start of a second").atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(10))
                    .until(() -> Instant.now().get(ChronoField.MILLI_OF_SECOND) < 300);
            world.create(name, null, 2, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
            world.create(other, null, 2, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
            assertThat(world.get(other).getMetadata().getCreationTimestamp()).as("created in the same second")
                    .isEqualTo(world.get(name).getMetadata().getCreationTimestamp());

            List<ScaleDown> both = Awaitility.await("both ScaleDowns finished").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(300))
                    .until(() -> List.of(world.get(name), world.get(other)), list -> list.stream().allMatch(ScaleDownCountIT::finished));
            assertThat(both).extracting(sd -> sd.getStatus().getPhase())
                    .containsExactlyInAnyOrder(ScaleDownStatus.Phase.Succeeded, ScaleDownStatus.Phase.Failed);
            ScaleDown done = both.stream().filter(sd -> sd.getStatus().getPhase() == ScaleDownStatus.Phase.Succeeded).findFirst().orElseThrow();
            ScaleDown refused = both.stream().filter(sd -> sd.getStatus().getPhase() == ScaleDownStatus.Phase.Failed).findFirst().orElseThrow();
            assertThat(refused.getStatus().getConditions()).as("the refusal names the other ScaleDown")
                    .anyMatch(c -> c.getMessage() != null && c.getMessage().contains("ScaleDown/" + done.getMetadata().getName()));

            List<String> removed = done.getStatus().getTargetNodes();
            List<String> left = workers.stream().filter(w -> !removed.contains(w)).toList();
            assertThat(left).as("one of the three workers stays").hasSize(1);
            assertThat(world.isUnschedulable(left.get(0))).as("and is schedulable").isFalse();
            assertThat(world.operatorAnnotations(left.get(0))).isEmpty();
            removed.forEach(world::assertNodeGone);
            assertThat(world.simulator().calls("scaleKubernetesCluster")).as("one scale call, by the one that went on").hasSize(1);
        } finally {
            world.delete(other);
        }
    }

    private static boolean finished(ScaleDown sd) {
        return sd != null && sd.getStatus() != null && sd.getStatus().finished();
    }

    private String slot(String node, String slot) {
        world.client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"" + SLOT_LABEL + "\":\"" + slot + "\"}}}");
        return node;
    }

    /** A Deployment whose pods run only on the worker with this slot, so each worker holds a known number of pods. */
    private void pinned(String slot, int replicas) {
        world.client.apps().deployments().inNamespace(pool.namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName(slot).endMetadata()
                .withNewSpec().withReplicas(replicas)
                .withNewSelector().addToMatchLabels("app", slot).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", slot).endMetadata()
                .withSpec(new PodSpecBuilder(pool.podSpec(false)).addToNodeSelector(Map.of(SLOT_LABEL, slot)).build())
                .endTemplate().endSpec().build()).create();
    }
}
