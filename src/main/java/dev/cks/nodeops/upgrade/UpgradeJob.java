package dev.cks.nodeops.upgrade;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;

/**
 * The Job that upgrades one node, and what its status says. Pure.
 *
 * The pod is privileged, pinned to the node by `nodeName` (no scheduler involved, so a cordoned node
 * still runs it), shares the host's PID namespace and mounts the host's root at /host, and tolerates
 * every taint (control-plane, unschedulable, NoExecute of a node that goes NotReady mid-upgrade).
 * The script it runs is copied from a ConfigMap into the host's filesystem and run with
 * `nsenter -t 1 -m -u -i -n -p`, i.e. in the mount, UTS, IPC, network and PID namespaces of the host's
 * init: there `kubeadm`, `systemctl restart kubelet`, the container runtime's socket and the ISO's
 * block device are the host's own. A chroot into /host would not do: a mount made by the script (the
 * ISO) would stay inside the container's mount namespace, and systemd would not see a host process.
 * The ConfigMap's mount only exists in the container's namespace, hence the copy.
 */
public final class UpgradeJob {
    public static final String LABEL_NODEUPGRADE = NodeAnnotations.PREFIX + "nodeupgrade";
    public static final String LABEL_NODE = NodeAnnotations.PREFIX + "node";
    public static final String ANNOTATION_ACTION = NodeAnnotations.PREFIX + "action";
    public static final String ANNOTATION_TARGET = NodeAnnotations.PREFIX + "target-version";
    /** A finished Job stays this long, so that a restarted operator can still read its outcome and log. */
    public static final int TTL_SECONDS_AFTER_FINISHED = 24 * 3600;
    static final String HOST_DIR = "/var/lib/cks-node-operator";
    static final String SCRIPT_MOUNT = "/upgrade";
    static final String SCRIPT_FILE = "script.sh";

    /**
     * Everything that shapes one node's Job.
     *
     * @param arguments what the script is called with, e.g. `v1.33.4 node`
     * @param attemptKey changes when the same node is upgraded again (a retry), so the new Job gets a new name
     */
    public record Request(String namespace, String nodeUpgradeName, String nodeUpgradeUid, String nodeName, String attemptKey,
            UpgradeNodeStatus.Action action, String targetVersion, String image, int timeoutSeconds,
            String configMapName, String configMapKey, List<String> arguments) {
    }

    private UpgradeJob() {
    }

    /** Deterministic: the same upgrade, node and attempt always give the same name, so a restarted operator finds its Job. */
    public static String name(String nodeUpgradeUid, String nodeName, String attemptKey) {
        String hash = sha256(nodeUpgradeUid + "/" + nodeName + "/" + (attemptKey == null ? "" : attemptKey)).substring(0, 10);
        String node = nodeName.length() > 40 ? nodeName.substring(0, 40) : nodeName;
        return ("upgrade-" + node).replaceAll("[^a-z0-9-]", "-").replaceAll("-+$", "") + "-" + hash;
    }

    public static Job build(Request request) {
        String name = name(request.nodeUpgradeUid(), request.nodeName(), request.attemptKey());
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_NODEUPGRADE, request.nodeUpgradeName());
        labels.put(LABEL_NODE, request.nodeName());
        String hostScript = HOST_DIR + "/" + name + ".sh";
        // $0 is the Job's name; "$@" are the script's arguments.
        String launcher = "set -eu\n"
                + "mkdir -p /host" + HOST_DIR + "\n"
                + "cp " + SCRIPT_MOUNT + "/" + SCRIPT_FILE + " /host" + hostScript + "\n"
                + "exec nsenter -t 1 -m -u -i -n -p -- sh " + hostScript + " \"$@\"\n";
        List<String> command = new java.util.ArrayList<>(List.of("sh", "-c", launcher, name));
        command.addAll(request.arguments());
        return new JobBuilder()
                .withNewMetadata()
                    .withName(name)
                    .withNamespace(request.namespace())
                    .withLabels(labels)
                    .addToAnnotations(ANNOTATION_ACTION, request.action().name())
                    .addToAnnotations(ANNOTATION_TARGET, request.targetVersion())
                    .withOwnerReferences(owner(request))
                .endMetadata()
                .withNewSpec()
                    .withBackoffLimit(0)
                    .withActiveDeadlineSeconds((long) request.timeoutSeconds())
                    .withTtlSecondsAfterFinished(TTL_SECONDS_AFTER_FINISHED)
                    .withNewTemplate()
                        .withNewMetadata().withLabels(labels).endMetadata()
                        .withNewSpec()
                            .withNodeName(request.nodeName())
                            .withHostPID(true)
                            .withRestartPolicy("Never")
                            .withPriorityClassName("system-node-critical")
                            .withTolerations(new TolerationBuilder().withOperator("Exists").build())
                            .addNewContainer()
                                .withName("upgrade")
                                .withImage(request.image())
                                .withCommand(command)
                                .withNewSecurityContext().withPrivileged(true).endSecurityContext()
                                .addNewVolumeMount().withName("host").withMountPath("/host").endVolumeMount()
                                .addNewVolumeMount().withName("script").withMountPath(SCRIPT_MOUNT).withReadOnly(true).endVolumeMount()
                            .endContainer()
                            .addNewVolume().withName("host").withNewHostPath().withPath("/").endHostPath().endVolume()
                            .addNewVolume().withName("script").withNewConfigMap().withName(request.configMapName())
                                .addNewItem().withKey(request.configMapKey()).withPath(SCRIPT_FILE).endItem()
                                .withDefaultMode(0755).endConfigMap().endVolume()
                        .endSpec()
                    .endTemplate()
                .endSpec()
                .build();
    }

    /** The Job is owned by the NodeUpgrade, so deleting the NodeUpgrade lets the garbage collector remove its Jobs. */
    private static OwnerReference owner(Request request) {
        return new OwnerReferenceBuilder().withApiVersion("nodeops.cks.dev/v1alpha1").withKind("NodeUpgrade")
                .withName(request.nodeUpgradeName()).withUid(request.nodeUpgradeUid()).build();
    }

    /** What a Job's status says about the upgrade it runs. */
    public sealed interface Outcome {
    }

    public record Running() implements Outcome {
    }

    public record Succeeded() implements Outcome {
    }

    /** @param reason the Job's Failed condition reason, e.g. BackoffLimitExceeded or DeadlineExceeded */
    public record Failed(String reason, String message) implements Outcome {
    }

    public static Outcome outcome(Job job) {
        if (job.getStatus() == null) {
            return new Running();
        }
        Optional<JobCondition> failed = condition(job, "Failed");
        if (failed.isPresent()) {
            return new Failed(failed.get().getReason(), failed.get().getMessage());
        }
        if (condition(job, "Complete").isPresent()) {
            return new Succeeded();
        }
        return new Running();
    }

    private static Optional<JobCondition> condition(Job job, String type) {
        List<JobCondition> conditions = job.getStatus().getConditions();
        return conditions == null ? Optional.empty()
                : conditions.stream().filter(c -> type.equals(c.getType()) && "True".equals(c.getStatus())).findFirst();
    }

    /**
     * The node's error for a failed Job: what the Job controller said first, then as much of the end of the
     * pod's log as fits in {@link #MAX_ERROR} characters (the end of a script's output says why it stopped).
     */
    public static String failureMessage(String namespace, String jobName, String nodeName, Failed failed, String log) {
        String head = "The upgrade Job " + namespace + "/" + jobName + " on node " + nodeName + " failed"
                + (failed.reason() == null ? "" : " (" + failed.reason() + (failed.message() == null ? "" : ": " + failed.message()) + ")")
                + ". Fix the cause on the node, then retry the NodeUpgrade.";
        String logPart = log == null || log.isBlank() ? "\nNo log of its pod could be read." : "\nLog tail:\n" + log.strip();
        String text = head + logPart;
        if (text.length() <= MAX_ERROR) {
            return text;
        }
        int room = MAX_ERROR - head.length() - "\nLog tail:\n…".length();
        String stripped = log.strip();
        return head + "\nLog tail:\n…" + stripped.substring(Math.max(0, stripped.length() - Math.max(0, room)));
    }

    /** The status keeps at most this much of an error (its tail matters most). */
    public static final int MAX_ERROR = 2000;

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
