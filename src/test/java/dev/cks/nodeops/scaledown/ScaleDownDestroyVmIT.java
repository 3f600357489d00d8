package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testbed.CloudStackFixture;

/** ScaleDown of an ExternalManaged CKS cluster: delete the Node, destroy and expunge the VM, drop it from the VM map. */
class ScaleDownDestroyVmIT extends ScaleDownScenario {
    ScaleDownDestroyVmIT() {
        super("sde", "ExternalManaged");
    }

    /** Halted between a destroy's intent and its sending, a new process waits until CloudStack could no longer take it. */
    @Override
    protected Map<String, String> operatorProperties() {
        return CloudStackFixture.SHORT_SIGNATURE_LIFETIME;
    }

    @Test
    void drainsThenDeletesTheNodeDestroysItsVmAndDropsItFromTheMap() {
        String node = world.addWorker(pool);
        pool.deployment("web", 2, false);
        pool.awaitReadyPods("web", 2);
        String spare = world.addWorker(pool);
        String vmId = world.fixture.vmId(node);

        world.create(pool.namespace, List.of(node), null, Removal.DestroyVM, 600, ScaleDownBed.drain(30, 0));
        ScaleDown done = world.awaitPhase(pool.namespace, ScaleDownStatus.Phase.Succeeded, Duration.ofSeconds(120));

        assertThat(world.simulator().calls("scaleKubernetesCluster")).isEmpty();
        assertThat(world.simulator().calls("destroyVirtualMachine")).singleElement().satisfies(call -> {
            assertThat(call.param("id")).isEqualTo(vmId);
            assertThat(call.param("expunge")).isEqualTo("true");
        });
        assertThat(world.simulator().calls("removeVirtualMachinesFromKubernetesCluster")).as("dropped from the map before it is destroyed")
                .singleElement().satisfies(call -> assertThat(call.param("virtualmachineids")).isEqualTo(vmId));
        assertThat(world.simulator().findVm(vmId)).as("the VM is expunged").isEmpty();
        assertThat(world.simulator().cluster(world.fixture.cluster().id()).vmIds()).doesNotContain(vmId);
        assertThat(done.getStatus().getRemoval().getRemovedVmIds()).containsExactly(vmId);
        assertThat(done.getStatus().getNodes().get(0).getRemovalJobId()).as("the destroy job was recorded, then polled").isNotBlank();
        world.assertNodeGone(node);
        pool.awaitReadyPods("web", 2);
        assertThat(pool.podsOn(spare)).hasSize(2);
    }

    /**
     * Halted right after a side effect of the removal, before its record (the Node deleted, the VM dropped from the map,
     * the destroy's intent recorded, destroyVirtualMachine answered, its job seen done): the new process looks instead of
     * sending anything again (the unsent destroy is sent once CloudStack could no longer take the request it never got).
     */
    @ParameterizedTest(name = "halted at {0}")
    @ValueSource(strings = {"scaledown.destroy.node-deleted", "scaledown.unmap.answered", "scaledown.destroy.intent", "scaledown.destroy.answered",
        "scaledown.destroy.done"})
    void haltedRightAfterAWriteANewProcessLooksInsteadOfSendingItAgain(String point) {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        String vmId = world.fixture.vmId(node);
        world.restartHaltingAt(point);

        world.create(pool.namespace, List.of(node), null, Removal.DestroyVM, 600, ScaleDownBed.drain(30, 0));
        world.awaitHaltedAndRestart(point, Duration.ofSeconds(150));
        world.awaitPhase(pool.namespace, ScaleDownStatus.Phase.Succeeded, Duration.ofSeconds(150));

        assertThat(world.simulator().calls("destroyVirtualMachine")).as("one destroy").hasSize(1);
        assertThat(world.simulator().calls("removeVirtualMachinesFromKubernetesCluster")).as("one map drop").hasSize(1);
        assertThat(world.simulator().findVm(vmId)).isEmpty();
        world.assertNodeGone(node);
        if (point.endsWith(".intent")) {
            assertThat(world.bed.eventsOf(pool.namespace)).as("sent once CloudStack could no longer take the recorded request")
                    .extracting(io.fabric8.kubernetes.api.model.Event::getReason).contains("RequestResent");
        }
    }
}
