package dev.cks.nodeops.realnode;

import java.nio.file.Path;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;

/** Real pods for the real node: they terminate the way real services do, and say so in a host directory. */
public final class RealPods {
    private RealPods() {
    }

    /**
     * Pods of the bed's shell image with a grace period, a preStop hook (writes "prestop POD", then
     * sleeps preStopSeconds), a SIGTERM handler (writes "term POD", exits) and a readiness probe
     * (Ready 2 s after start); they tolerate the control-plane taint, so they run on the real node.
     * Both hooks append to `events/events` on the host.
     */
    public static Deployment graceful(String name, int replicas, String shellImage, Path events, long graceSeconds, int preStopSeconds) {
        return new DeploymentBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withReplicas(replicas)
                .withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata()
                .withNewSpec()
                .withTerminationGracePeriodSeconds(graceSeconds)
                .addNewToleration().withKey("node-role.kubernetes.io/control-plane").withOperator("Exists").withEffect("NoSchedule").endToleration()
                .addNewContainer().withName(name).withImage(shellImage).withImagePullPolicy("IfNotPresent")
                .withCommand("sh", "-c", "trap 'echo term $(hostname) >> /events/events; exit 0' TERM; "
                        + "sleep 2; touch /tmp/ready; while true; do sleep 1; done")
                .withNewReadinessProbe().withNewExec().withCommand("test", "-f", "/tmp/ready").endExec()
                .withPeriodSeconds(1).endReadinessProbe()
                .withNewLifecycle().withNewPreStop().withNewExec()
                .withCommand("sh", "-c", "echo prestop $(hostname) >> /events/events; sleep " + preStopSeconds).endExec().endPreStop().endLifecycle()
                .addNewVolumeMount().withName("events").withMountPath("/events").endVolumeMount()
                .addNewVolumeMount().withName("tmp").withMountPath("/tmp").endVolumeMount()
                .endContainer()
                .addNewVolume().withName("events").withNewHostPath().withPath(events.toString()).withType("Directory").endHostPath().endVolume()
                .addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume()
                .endSpec().endTemplate().endSpec().build();
    }
}
