package dev.cks.nodeops.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;

/**
 * Proves the bed behaves like a real cluster where the drain depends on it: the scheduler places
 * pods on KWOK workers, the disruption controller computes PDB status, the Eviction API answers
 * 429 when a PDB forbids it, and a ReplicaSet recreates an evicted pod elsewhere.
 */
@ExtendWith(TestBedExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ControlPlaneIT {
    private TestBed bed;
    private KubernetesClient client;
    private String namespace;
    private Set<String> workers;

    @BeforeAll
    void setUp(TestBed bed) {
        this.bed = bed;
        this.client = bed.client();
        System.out.println("[testbed] ControlPlaneIT runs against Kubernetes " + bed.serverVersion());
        namespace = bed.newNamespace("bed");
        workers = Set.of(bed.addWorker("bed").getMetadata().getName(), bed.addWorker("bed").getMetadata().getName(),
                bed.addWorker("bed").getMetadata().getName());
        // A merge patch carries no resourceVersion: KWOK updates a new worker's status meanwhile, and an edit()
        // (a patch made from the object read) would conflict with that.
        workers.forEach(w -> client.nodes().withName(w).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"testbed-it\":\"yes\"}}}"));
    }

    @Test
    @Order(1)
    void aDeploymentIsScheduledOntoKwokWorkersAndBecomesReady() {
        assertThat(bed.serverVersion()).startsWith("v1.");
        Deployment deployment = new DeploymentBuilder()
                .withNewMetadata().withName("web").withNamespace(namespace).endMetadata()
                .withNewSpec().withReplicas(3)
                .withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().addToNodeSelector("testbed-it", "yes")
                .addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("kubernetes.io/hostname")
                .withWhenUnsatisfiable("ScheduleAnyway").withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector()
                .endTopologySpreadConstraint()
                .addNewContainer().withName("web").withImage("registry.invalid/web:1").endContainer()
                .endSpec().endTemplate().endSpec().build();
        client.apps().deployments().resource(deployment).create();
        client.apps().deployments().inNamespace(namespace).withName("web")
                .waitUntilCondition(d -> d.getStatus() != null && Integer.valueOf(3).equals(d.getStatus().getReadyReplicas()), 90, TimeUnit.SECONDS);
        List<Pod> pods = webPods();
        assertThat(pods).hasSize(3);
        assertThat(pods).allSatisfy(p -> assertThat(workers).contains(p.getSpec().getNodeName()));
    }

    @Test
    @Order(2)
    void aPdbThatAllowsNoDisruptionMakesTheEvictionAnswer429() {
        client.policy().v1().podDisruptionBudget().resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("web").withNamespace(namespace).endMetadata()
                .withNewSpec().withMinAvailable(new IntOrString(3)).withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .build()).create();
        awaitDisruptionsAllowed(0);
        Pod victim = webPods().get(0);
        // Fabric8's evict() folds a 429 into `false`; the raw request shows what the API server says.
        HttpResponse<String> response = postEviction(victim);
        assertThat(response.code()).isEqualTo(429);
        assertThat(response.body()).contains("Cannot evict pod as it would violate the pod's disruption budget");
        assertThat(client.pods().resource(victim).get().getMetadata().getDeletionTimestamp()).isNull();
    }

    @Test
    @Order(3)
    void aPdbThatAllowsOneDisruptionLetsOneEvictionThroughAndTheReplicaSetRecreatesThePodElsewhere() {
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web")
                .edit(pdb -> {
                    pdb.getSpec().setMinAvailable(new IntOrString(2));
                    return pdb;
                });
        awaitDisruptionsAllowed(1);
        Pod victim = webPods().get(0);
        String victimNode = victim.getSpec().getNodeName();
        client.nodes().withName(victimNode).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"unschedulable\":true}}");
        Set<String> before = webPods().stream().map(p -> p.getMetadata().getUid()).collect(java.util.stream.Collectors.toSet());
        assertThat(client.pods().resource(victim).evict(eviction(victim))).isTrue();
        Awaitility.await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
            List<Pod> pods = webPods().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList();
            assertThat(pods).hasSize(3);
            assertThat(pods).noneMatch(p -> p.getMetadata().getUid().equals(victim.getMetadata().getUid()));
            // Other pods may share the cordoned node (the spread is only preferred); the replacement may not.
            assertThat(pods).filteredOn(p -> !before.contains(p.getMetadata().getUid()))
                    .singleElement().satisfies(p -> assertThat(p.getSpec().getNodeName()).isNotEqualTo(victimNode).isIn(workers));
        });
    }

    private void awaitDisruptionsAllowed(int expected) {
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web")
                .waitUntilCondition(p -> p.getStatus() != null && p.getStatus().getObservedGeneration() != null
                        && p.getStatus().getObservedGeneration().equals(p.getMetadata().getGeneration())
                        && p.getStatus().getDisruptionsAllowed() == expected, 60, TimeUnit.SECONDS);
    }

    private List<Pod> webPods() {
        return client.pods().inNamespace(namespace).withLabels(Map.of("app", "web")).list().getItems();
    }

    private HttpResponse<String> postEviction(Pod pod) {
        String path = "api/v1/namespaces/" + pod.getMetadata().getNamespace() + "/pods/" + pod.getMetadata().getName() + "/eviction";
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
                .uri(client.getMasterUrl().toString() + path)
                .post("application/json", client.getKubernetesSerialization().asJson(eviction(pod)))
                .build();
        try {
            return client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("eviction request failed: " + e, e);
        }
    }

    private static Eviction eviction(Pod pod) {
        return new EvictionBuilder().withNewMetadata().withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace()).endMetadata().build();
    }
}
