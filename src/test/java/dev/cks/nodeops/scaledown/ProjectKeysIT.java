package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testbed.CloudStackFixture;

/**
 * Shape: a project cluster whose keys CloudStack restricts to the Kubernetes Service User role: the operator is
 * given the cluster's own cloudstack-secret, which may scale the cluster but neither list CloudStack's jobs nor
 * call listApis. The operator runs as its own process against the bed.
 */
class ProjectKeysIT extends ScaleDownScenario {
    private static final Duration WITHIN = Duration.ofSeconds(180);

    ProjectKeysIT() {
        super("pk", "CloudManaged");
    }

    /** A lost answer could be sent again after 30 s + 10 s here: the scale job runs longer than that. */
    @Override
    protected Map<String, String> operatorProperties() {
        return CloudStackFixture.SHORT_SIGNATURE_LIFETIME;
    }

    /**
     * Actor: a proxy that loses CloudStack's answer to the scale (a gateway timeout after CloudStack took it);
     * CloudStack's job runs 20 s longer than the request's signature window. The operator may not list jobs: it waits
     * while the cluster is Scaling, sends the scale once, and the ScaleDown succeeds.
     */
    @Test
    void aLostScaleAnswerWithTheProjectServiceUsersKeysEndsWithOneScaleAndNoJobSearch() {
        world.simulator().playProjectKubernetesServiceRole(world.simulator().defaultAccount());
        String node = world.addWorker(pool);
        world.addWorker(pool);
        // Named by the cluster's id: the preflight's probe, sent without parameters, does not meet it.
        world.simulator().injectFault("scaleKubernetesCluster", "id", world.fixture.cluster().id(), Fault.actsThenGatewayTimeout());
        world.simulator().planJob("scaleKubernetesCluster", JobOutcome.succeedsAfter(CloudStackFixture.SHORT_REQUEST_WINDOW.plusSeconds(20)));

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(60, 0));
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(world.simulator().calls("scaleKubernetesCluster")).filteredOn(call -> call.params().containsKey("nodeids"))
                .as("sent once: never again while the cluster was Scaling").hasSize(1);
        assertThat(world.simulator().calls("listAsyncJobs")).as("the jobs were never searched")
                .allSatisfy(call -> assertThat(call.params()).doesNotContainKey("startdate"));
        assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(ScaleDownNodeStatus.Phase.Removed);
        world.assertNodeGone(node);
    }
}
