package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;

/** Status texts as the kubelet and the Job controller write them (kubelet images/kuberuntime, job controller FailedCreate). */
class UpgradePodTest {

    @Test
    void aJobWithAReadyOrFinishedPodHasStartedByItsStatusAlone() {
        assertThat(UpgradePod.startedByJobStatus(new JobBuilder().withNewStatus().withActive(1).withReady(1).endStatus().build())).isTrue();
        assertThat(UpgradePod.startedByJobStatus(new JobBuilder().withNewStatus().withSucceeded(1).endStatus().build())).isTrue();
        assertThat(UpgradePod.startedByJobStatus(new JobBuilder().withNewStatus().withActive(1).withReady(0).endStatus().build())).isFalse();
        assertThat(UpgradePod.startedByJobStatus(new JobBuilder().build())).isFalse();
    }

    @Test
    void aPodThatRunsOrRanHasStartedAndTheEventsAreNotRead() {
        for (String phase : List.of("Running", "Succeeded", "Failed")) {
            assertThat(UpgradePod.of(List.of(pod("p", phase)), () -> {
                throw new AssertionError("events read although a pod exists");
            })).isEqualTo(new UpgradePod.Started());
        }
    }

    @Test
    void noPodIsStuckWithTheJobControllersReasonAndOnlyWaitingWithout() {
        String forbidden = "Error creating: pods \"upgrade-x\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10";
        assertThat(UpgradePod.of(List.of(), () -> Optional.of(forbidden)))
                .isEqualTo(new UpgradePod.NotRunning("its pod could not be created: " + forbidden, true));
        assertThat(UpgradePod.of(List.of(), Optional::empty)).isEqualTo(new UpgradePod.NotRunning("it has made no pod yet", false));
    }

    @Test
    void aContainerTheKubeletCannotStartIsStuckWithItsReasonAndMessage() {
        Pod pod = new PodBuilder(pod("upgrade-x-abcde", "Pending")).editStatus().addNewContainerStatus().withName("upgrade")
                .withNewState().withNewWaiting().withReason("ImagePullBackOff")
                .withMessage("Back-off pulling image \"registry.example/kubeadm:v1.35.9\"").endWaiting().endState()
                .endContainerStatus().endStatus().build();
        assertThat(UpgradePod.of(List.of(pod), Optional::empty)).isEqualTo(new UpgradePod.NotRunning(
                "its pod upgrade-x-abcde cannot start its container: ImagePullBackOff (Back-off pulling image \"registry.example/kubeadm:v1.35.9\")",
                true));
    }

    @Test
    void aContainerBeingCreatedOrAPodNoKubeletHasSeenIsOnlyWaiting() {
        Pod creating = new PodBuilder(pod("upgrade-x-abcde", "Pending")).editStatus().addNewContainerStatus().withName("upgrade")
                .withNewState().withNewWaiting().withReason("ContainerCreating").endWaiting().endState().endContainerStatus().endStatus().build();
        assertThat(UpgradePod.of(List.of(creating), Optional::empty))
                .isEqualTo(new UpgradePod.NotRunning("its pod upgrade-x-abcde is starting (ContainerCreating)", false));
        assertThat(UpgradePod.of(List.of(pod("upgrade-x-abcde", "Pending")), Optional::empty))
                .isEqualTo(new UpgradePod.NotRunning("its pod upgrade-x-abcde is Pending: the node's kubelet has not started it yet", false));
    }

    @Test
    void aPodNotScheduledIsStuckAndTheNewestPodIsTheOneDescribed() {
        Pod older = new PodBuilder(pod("upgrade-x-older", "Pending")).editMetadata().withCreationTimestamp("2026-11-30T12:00:00Z").endMetadata().build();
        Pod newer = new PodBuilder(pod("upgrade-x-newer", "Pending")).editMetadata().withCreationTimestamp("2026-11-30T12:01:00Z").endMetadata()
                .editStatus().addNewCondition().withType("PodScheduled").withStatus("False").withReason("Unschedulable")
                .withMessage("0/3 nodes are available").endCondition().endStatus().build();
        assertThat(UpgradePod.of(List.of(older, newer), Optional::empty)).isEqualTo(new UpgradePod.NotRunning(
                "its pod upgrade-x-newer is not scheduled: Unschedulable (0/3 nodes are available)", true));
    }

    private static Pod pod(String name, String phase) {
        return new PodBuilder().withNewMetadata().withName(name).withCreationTimestamp("2026-11-30T12:00:00Z").endMetadata()
                .withNewStatus().withPhase(phase).endStatus().build();
    }
}
