package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
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

        assertThat(done.getStatus().getTargetNodes()).isEqualTo(newestEmpty + "," + olderEmpty);
        assertThat(world.isUnschedulable(twoPods)).isFalse();
        assertThat(world.isUnschedulable(onePod)).isFalse();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids").split(","))
                        .containsExactlyInAnyOrder(world.fixture.vmId(newestEmpty), world.fixture.vmId(olderEmpty)));
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
