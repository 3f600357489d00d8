package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;

/**
 * The API server (or etcd) goes away for as long as `kubeadm upgrade apply` keeps a single control plane
 * down, while a ScaleDown drains or while CloudStack removes its VMs: the operator keeps its Lease, waits,
 * and the ScaleDown completes with one scale call. In the outage group (`./mvnw verify -Poutage`).
 */
class ScaleDownOutageIT extends ScaleDownScenario {
    private static final Duration WITHIN = Duration.ofMinutes(4);

    ScaleDownOutageIT() {
        super("sdo", "CloudManaged");
    }

    @ParameterizedTest(name = "{0} down {1}s while {2}")
    @CsvSource({"kube-apiserver, 90, Draining", "kube-apiserver, 90, Removing", "etcd, 30, Draining"})
    void theScaleDownCompletesAcrossAnOutage(String component, int seconds, ScaleDownStatus.Phase during) throws Exception {
        world.restartWith(Map.of("cks.leader-election.lease-duration-seconds", "150", "cks.leader-election.renew-deadline-seconds", "120",
                "cks.leader-election.retry-period-seconds", "5"));
        String node = world.addWorker(pool);
        String spare = world.addWorker(pool);
        if (during == ScaleDownStatus.Phase.Draining) {
            pool.deployment("web", 2, false);
            pool.budget("web-pdb", "web", 2, null);
            pool.awaitReadyPods("web", 2);
            pool.awaitBudget("web-pdb", 2, 2);
        } else {
            world.simulator().planJob("scaleKubernetesCluster", new JobOutcome.SucceedsAfter(Duration.ofSeconds(seconds + 30)));
        }

        world.create(name, List.of(node), null, Removal.CloudStackScale, 1800, ScaleDownBed.drain(900, 0));
        world.await(name, "the ScaleDown " + during, sd -> sd != null && sd.getStatus() != null && sd.getStatus().getPhase() == during
                && (during != ScaleDownStatus.Phase.Removing || sd.getStatus().getRemoval() != null && sd.getStatus().getRemoval().getJobId() != null), WITHIN);
        world.bed.stopComponent(component);
        Thread.sleep(Duration.ofSeconds(seconds).toMillis());
        assertThat(world.operatorAlive()).as("the operator waited through the outage instead of exiting").isTrue();
        world.bed.startComponent(component);
        if (during == ScaleDownStatus.Phase.Draining) {
            world.client.policy().v1().podDisruptionBudget().inNamespace(pool.namespace).withName("web-pdb").delete();
        }

        world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);
        assertThat(world.operatorAlive()).isTrue();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).as("one scale call").hasSize(1);
        world.assertNodeGone(node);
        assertThat(world.isUnschedulable(spare)).isFalse();
    }
}
