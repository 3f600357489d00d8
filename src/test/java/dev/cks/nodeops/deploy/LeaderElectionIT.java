package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.ApiPartition;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * Two operator processes: only the Lease holder works; when it is killed half-way through a
 * ScaleDown, the other takes the Lease and finishes the operation correctly.
 */
@ExtendWith(TestBedExtension.class)
class LeaderElectionIT {
    static final String LEASE = "cks-node-operator-leader";

    @Test
    void theStandbyTakesOverAKilledLeadersScaleDownAndFinishesIt(TestBed bed) {
        KubernetesClient client = bed.client();
        List<Node> nodes = new ArrayList<>(List.of(bed.addControlPlane("lead")));
        for (int i = 0; i < 3; i++) {
            nodes.add(bed.addWorker("lead"));
        }
        List<String> workers = nodes.subList(1, 4).stream().map(n -> n.getMetadata().getName()).toList();
        // A merge patch: KWOK updates the workers' status meanwhile, which an edit() would conflict with.
        workers.forEach(w -> client.nodes().withName(w).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"lead-it\":\"yes\"}}}"));
        String victim = workers.get(0);
        String namespace = bed.newNamespace("lead");
        // Six pods, most of them on the victim, under a PDB that at first allows no disruption: the
        // drain is held in its eviction retries while the leader is killed, and released after.
        client.apps().deployments().inNamespace(namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withReplicas(6).withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().addToNodeSelector("lead-it", "yes")
                .withNewAffinity().withNewNodeAffinity().addNewPreferredDuringSchedulingIgnoredDuringExecution()
                .withWeight(100).withNewPreference().addNewMatchExpression().withKey("kubernetes.io/hostname").withOperator("In")
                .withValues(victim).endMatchExpression().endPreference().endPreferredDuringSchedulingIgnoredDuringExecution()
                .endNodeAffinity().endAffinity()
                .addNewContainer().withName("web").withImage("registry.invalid/web:1").endContainer()
                .endSpec().endTemplate().endSpec().build()).create();
        Awaitility.await().atMost(Duration.ofSeconds(90)).until(() -> Integer.valueOf(6)
                .equals(client.apps().deployments().inNamespace(namespace).withName("web").get().getStatus().getReadyReplicas()));
        assertThat(client.pods().inNamespace(namespace).list().getItems()).anyMatch(p -> victim.equals(p.getSpec().getNodeName()));
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withMinAvailable(new IntOrString(6)).withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .build()).create();

        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "lead", "CloudManaged", nodes)) {
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.leader-election.identity", "operator-a");
            OperatorProcess leader = OperatorProcess.start(bed, "leader-a", properties);
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "operator-a".equals(holder(client)));
            properties.put("cks.leader-election.identity", "operator-b");
            try (OperatorProcess standby = OperatorProcess.start(bed, "leader-b", properties)) {
                assertThat(holder(client)).as("the standby does not take a held Lease").isEqualTo("operator-a");

                ScaleDown scaleDown = new ScaleDown();
                scaleDown.getMetadata().setName("leader-handover");
                ScaleDownSpec spec = new ScaleDownSpec();
                spec.setNodeNames(List.of(victim));
                spec.getDrain().setTimeoutSeconds(120);
                spec.getDrain().setRetryIntervalSeconds(1);
                scaleDown.setSpec(spec);
                client.resource(scaleDown).create();
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> phase(client) == ScaleDownStatus.Phase.Draining);
                leader.kill();

                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "operator-b".equals(holder(client)));
                client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web").edit(pdb -> {
                    pdb.getSpec().setMinAvailable(null);
                    pdb.getSpec().setMaxUnavailable(new IntOrString(1));
                    return pdb;
                });
                Awaitility.await().atMost(Duration.ofSeconds(180)).until(() -> phase(client) == ScaleDownStatus.Phase.Succeeded);
                assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).hasSize(1);
                assertThat(cloudStack.simulator().cluster(cloudStack.cluster().id()).vmIds()).doesNotContain(cloudStack.vmId(victim));
                assertThat(client.pods().inNamespace(namespace).list().getItems())
                        .filteredOn(p -> p.getMetadata().getDeletionTimestamp() == null)
                        .hasSize(6)
                        .allSatisfy(p -> assertThat(p.getSpec().getNodeName()).isNotEqualTo(victim));
                for (String other : workers.subList(1, 3)) {
                    Node node = client.nodes().withName(other).get();
                    assertThat(node.getSpec().getUnschedulable()).as("%s is schedulable", other).isNotEqualTo(Boolean.TRUE);
                    assertThat(node.getMetadata().getAnnotations()).doesNotContainKeys(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY);
                }
            }
        }
    }

    /**
     * The leader is cut off from the API server while CloudStack removes a ScaleDown's VM: it stops (halts)
     * within its renew deadline, before the standby may take the Lease; the standby follows the same scale
     * job to the end; and the old leader never comes back to write (not one connection after the cut heals).
     */
    @Test
    void aLeaderCutOffFromTheApiServerStopsBeforeTheStandbyTakesOverAndNeverWritesAgain(TestBed bed) throws Exception {
        KubernetesClient client = bed.client();
        List<Node> nodes = new ArrayList<>(List.of(bed.addControlPlane("part"), bed.addWorker("part"), bed.addWorker("part")));
        String leaving = nodes.get(2).getMetadata().getName();
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "part", "CloudManaged", nodes)) {
            cloudStack.simulator().planJob("scaleKubernetesCluster", new dev.cks.nodeops.cloudstack.simulator.JobOutcome.SucceedsAfter(Duration.ofSeconds(60)));
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            properties.put("cks.leader-election.identity", "partitioned-a");
            try (ApiPartition partition = new ApiPartition(bed, bed.operatorKubeconfig(properties), "partitioned-a");
                    OperatorProcess leader = OperatorProcess.start(bed, partition.kubeconfig(), "partitioned-a", properties)) {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "partitioned-a".equals(holder(client)));
                properties.put("cks.leader-election.identity", "partitioned-b");
                try (OperatorProcess standby = OperatorProcess.start(bed, "partitioned-b", properties)) {
                    ScaleDown scaleDown = new ScaleDown();
                    scaleDown.getMetadata().setName("leader-partitioned");
                    ScaleDownSpec spec = new ScaleDownSpec();
                    spec.setNodeNames(List.of(leaving));
                    scaleDown.setSpec(spec);
                    client.resource(scaleDown).create();
                    Awaitility.await().atMost(Duration.ofSeconds(90)).until(() -> {
                        ScaleDown current = client.resources(ScaleDown.class).withName("leader-partitioned").get();
                        return current != null && current.getStatus() != null && current.getStatus().getRemoval() != null
                                && current.getStatus().getRemoval().getJobId() != null;
                    });

                    partition.cut();
                    assertThat(leader.awaitExit(Duration.ofSeconds(60))).as("the leader halts once it could not renew")
                            .isEqualTo(dev.cks.nodeops.common.LeaderElection.LOST_LEASE_EXIT_STATUS);
                    java.time.Instant leaderGone = java.time.Instant.now();
                    assertThat(leader.output()).contains("Lost the leader Lease");
                    Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "partitioned-b".equals(holder(client)));
                    Lease lease = client.leases().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(LEASE).get();
                    assertThat(lease.getSpec().getAcquireTime().toInstant())
                            .as("the standby took the Lease only after the leader had stopped").isAfter(leaderGone.minusSeconds(1));
                    partition.heal();

                    Awaitility.await().atMost(Duration.ofSeconds(180)).until(() -> phase(client, "leader-partitioned") == ScaleDownStatus.Phase.Succeeded);
                    assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).as("the standby followed the same job").hasSize(1);
                    assertThat(partition.connectionsSince()).as("the old leader never came back to the API server").isZero();
                } finally {
                    client.resources(ScaleDown.class).withName("leader-partitioned").delete();
                }
            }
        }
    }

    /**
     * SIGTERM to the leader, as Kubernetes stops its pod: it ends within seconds by itself — not halted
     * for a lost Lease, not hung in its shutdown — and gives the Lease up, so the standby leads at once
     * rather than a lease duration later.
     */
    @Test
    void aLeaderStoppedWithSigtermEndsPromptlyAndGivesTheLeaseUp(TestBed bed) throws java.io.IOException {
        KubernetesClient client = bed.client();
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "term", "CloudManaged", List.of(bed.addControlPlane("term")))) {
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.leader-election.identity", "sigterm-a");
            OperatorProcess leader = OperatorProcess.start(bed, "sigterm-a", properties);
            try {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "sigterm-a".equals(holder(client)));
                properties.put("cks.leader-election.identity", "sigterm-b");
                try (OperatorProcess standby = OperatorProcess.start(bed, "sigterm-b", properties)) {
                    java.time.Instant stopped = java.time.Instant.now();
                    int status = leader.terminate(Duration.ofSeconds(20));

                    assertThat(status).as("a normal stop, not a halt for a lost Lease").isNotEqualTo(dev.cks.nodeops.common.LeaderElection.LOST_LEASE_EXIT_STATUS);
                    assertThat(leader.output()).doesNotContain("Lost the leader Lease");
                    Awaitility.await("the standby leads").atMost(Duration.ofSeconds(60)).until(() -> "sigterm-b".equals(holder(client)));
                    // The standby looks every retry period (2 s): far below the 30 s lease it would otherwise wait out.
                    assertThat(Duration.between(stopped, java.time.Instant.now())).as("sooner than the lease duration after the stop")
                            .isLessThan(Duration.ofSeconds(OperatorProcess.TEST_LEASE_SECONDS / 2));
                    assertThat(leader.output()).contains("Gave the leader Lease up on shutdown.");
                }
            } finally {
                leader.kill();
            }
        }
    }

    /**
     * SIGTERM while the API server cannot be reached (a pod stopped during a control-plane outage): the
     * Lease cannot be given up, and the stop must not wait for it, else the kubelet waits out the pod's
     * grace period (30 s by default) and kills it. Both ways an API server is gone: connections refused,
     * and packets dropped (nothing answers). Production Lease timings, so the renew deadline does not halt it first.
     */
    @ParameterizedTest(name = "API server {0}")
    @ValueSource(strings = {"refusing", "silent"})
    void aLeaderStoppedWithSigtermWhileCutOffFromTheApiServerStillEndsPromptly(String outage, TestBed bed) throws Exception {
        KubernetesClient client = bed.client();
        String identity = "cut-sigterm-" + outage;
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "cut" + outage, "CloudManaged", List.of(bed.addControlPlane("cut" + outage)))) {
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.putAll(Map.of("cks.leader-election.identity", identity, "cks.leader-election.lease-duration-seconds", "150",
                    "cks.leader-election.renew-deadline-seconds", "120", "cks.leader-election.retry-period-seconds", "5"));
            try (ApiPartition partition = new ApiPartition(bed, bed.operatorKubeconfig(properties), identity);
                    OperatorProcess leader = OperatorProcess.start(bed, partition.kubeconfig(), identity, properties)) {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> identity.equals(holder(client)));
                if (outage.equals("silent")) {
                    partition.silence();
                } else {
                    partition.cut();
                }

                // The release's calls (3 s each at most), Quarkus's wait for Vert.x to close (3 s at most), the rest of a stop.
                int status = leader.terminate(Duration.ofSeconds(10));

                assertThat(status).as("a normal stop, not a halt for a lost Lease").isNotEqualTo(dev.cks.nodeops.common.LeaderElection.LOST_LEASE_EXIT_STATUS);
                assertThat(leader.output()).doesNotContain("Lost the leader Lease").contains("Could not give the leader Lease up on shutdown");
            } finally {
                // The next test's operators must not wait out this one's 150 s Lease.
                client.leases().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(LEASE).delete();
            }
        }
    }

    static String holder(KubernetesClient client) {
        Lease lease = client.leases().inNamespace(TestBed.OPERATOR_NAMESPACE).withName(LEASE).get();
        return lease == null ? null : lease.getSpec().getHolderIdentity();
    }

    private static ScaleDownStatus.Phase phase(KubernetesClient client) {
        return phase(client, "leader-handover");
    }

    static ScaleDownStatus.Phase phase(KubernetesClient client, String name) {
        ScaleDown current = client.resources(ScaleDown.class).withName(name).get();
        return current == null || current.getStatus() == null ? null : current.getStatus().getPhase();
    }
}
