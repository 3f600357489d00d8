package dev.cks.nodeops.upgrade;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.ContainerStateWaiting;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;

/**
 * Whether an upgrade Job's pod runs, and if not, why, in the words of whoever holds it up: the Job
 * controller (no pod made: its FailedCreate event), the node's kubelet (the container's waiting reason) or
 * nobody yet. Pure: the pods and the event are read by {@link UpgradeJobs}.
 */
final class UpgradePod {
    private UpgradePod() {
    }

    /**
     * The kubelet's waiting reasons of a container that is on its way (kubelet kuberuntime and images
     * packages): any other waiting reason (ErrImagePull, ImagePullBackOff, InvalidImageName,
     * CreateContainerConfigError, CreateContainerError, ...) means it will not start without help.
     */
    private static final Set<String> ON_ITS_WAY = Set.of("ContainerCreating", "PodInitializing");

    sealed interface State {
    }

    /** The pod runs or has run: the Job's own conditions tell the rest. */
    record Started() implements State {
    }

    /** @param stuck whether someone must act (a waiting reason, a pod the Job controller could not create), not only wait */
    record NotRunning(String why, boolean stuck) implements State {
    }

    /** From the Job's status alone: a pod counted ready (it runs; the upgrade container has no probe), succeeded or failed. */
    static boolean startedByJobStatus(Job job) {
        var status = job.getStatus();
        return status != null && (positive(status.getReady()) || positive(status.getSucceeded()) || positive(status.getFailed()));
    }

    /**
     * @param pods the Job's pods
     * @param failedCreate the message of the Job's latest FailedCreate event, read only when it has no pod
     */
    static State of(List<Pod> pods, Supplier<Optional<String>> failedCreate) {
        if (pods.stream().anyMatch(UpgradePod::ranOrRuns)) {
            return new Started();
        }
        Optional<Pod> newest = pods.stream().max(Comparator.comparing(p -> p.getMetadata().getCreationTimestamp()));
        if (newest.isEmpty()) {
            return failedCreate.get().<State>map(message -> new NotRunning("its pod could not be created: " + message, true))
                    .orElseGet(() -> new NotRunning("it has made no pod yet", false));
        }
        Pod pod = newest.get();
        String name = "its pod " + pod.getMetadata().getName();
        Optional<ContainerStateWaiting> waiting = waiting(pod);
        if (waiting.isPresent() && !ON_ITS_WAY.contains(waiting.get().getReason())) {
            return new NotRunning(name + " cannot start its container: " + reasonAndMessage(waiting.get().getReason(), waiting.get().getMessage()), true);
        }
        Optional<PodCondition> unscheduled = condition(pod, "PodScheduled").filter(c -> "False".equals(c.getStatus()));
        if (unscheduled.isPresent()) {
            return new NotRunning(name + " is not scheduled: " + reasonAndMessage(unscheduled.get().getReason(), unscheduled.get().getMessage()), true);
        }
        return waiting.isPresent()
                ? new NotRunning(name + " is starting (" + waiting.get().getReason() + ")", false)
                : new NotRunning(name + " is Pending: the node's kubelet has not started it yet", false);
    }

    private static boolean ranOrRuns(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Running".equals(phase) || "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    private static Optional<ContainerStateWaiting> waiting(Pod pod) {
        if (pod.getStatus() == null) {
            return Optional.empty();
        }
        List<ContainerStatus> statuses = pod.getStatus().getContainerStatuses() == null ? List.of() : pod.getStatus().getContainerStatuses();
        return statuses.stream().map(s -> s.getState() == null ? null : s.getState().getWaiting())
                .filter(w -> w != null && w.getReason() != null).findFirst();
    }

    private static Optional<PodCondition> condition(Pod pod, String type) {
        return pod.getStatus() == null || pod.getStatus().getConditions() == null ? Optional.empty()
                : pod.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    private static String reasonAndMessage(String reason, String message) {
        String r = reason == null ? "(no reason given)" : reason;
        return message == null || message.isBlank() ? r : r + " (" + message.strip() + ")";
    }

    private static boolean positive(Integer count) {
        return count != null && count > 0;
    }
}
