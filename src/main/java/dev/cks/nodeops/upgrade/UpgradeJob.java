package dev.cks.nodeops.upgrade;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
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
 * `nsenter -t 1 -m -u -i -n -p -- /bin/sh`, i.e. in the mount, UTS, IPC, network and PID namespaces of the host's
 * init: there `kubeadm`, `systemctl restart kubelet`, the container runtime's socket and the ISO's
 * block device are the host's own. A chroot into /host would not do: a mount made by the script (the
 * ISO) would stay inside the container's mount namespace, and systemd would not see a host process.
 * The ConfigMap's mount only exists in the container's namespace, hence the copy.
 *
 * The pod gets no ServiceAccount token and no service environment: the script needs no API access, and
 * a token on a privileged host pod would hand the namespace's default ServiceAccount to anyone who
 * reads the node's disk. The script's sha256 is recorded on the Job, and the launcher checks the copy
 * it is about to run against it: a ConfigMap changed after the operator checked it runs nothing.
 */
public final class UpgradeJob {
    public static final String LABEL_NODEUPGRADE = NodeAnnotations.PREFIX + "nodeupgrade";
    public static final String LABEL_NODE = NodeAnnotations.PREFIX + "node";
    /** On the ISO canary's Job instead of {@link #LABEL_NODE}: it is no upgrade of the node, and nothing waits for it as for one. */
    public static final String LABEL_ISO_CANARY = NodeAnnotations.PREFIX + "iso-canary";
    public static final String ANNOTATION_ACTION = NodeAnnotations.PREFIX + "action";
    public static final String ANNOTATION_TARGET = NodeAnnotations.PREFIX + "target-version";
    /** The name of the NodeUpgrade that made the Job (a label may hold only a hash of a long name). */
    public static final String ANNOTATION_NODEUPGRADE = NodeAnnotations.PREFIX + "nodeupgrade";
    /** The sha256 (hex) of the script the Job may run; the launcher refuses any other. */
    public static final String ANNOTATION_SCRIPT_SHA256 = NodeAnnotations.PREFIX + "script-sha256";
    /** A label value holds at most this much (Kubernetes' limit). */
    static final int MAX_LABEL_VALUE = 63;
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
     * @param scriptSha256 the hex sha256 of the script as the operator checked it; the Job runs nothing else
     */
    public record Request(String namespace, String nodeUpgradeName, String nodeUpgradeUid, String nodeName, String attemptKey,
            UpgradeNodeStatus.Action action, String targetVersion, Runtime runtime, int timeoutSeconds,
            String configMapName, String configMapKey, List<String> arguments, String scriptSha256) {
        public Request {
            java.util.Objects.requireNonNull(scriptSha256, "an upgrade Job runs only a script whose digest the operator checked");
        }

    }

    /**
     * What the operator's configuration says about every upgrade Job's pod (Helm values upgrade.jobImage,
     * imagePullSecrets, upgrade.jobResources): an air-gapped site pulls the image from its own registry.
     */
    public record Runtime(String image, List<String> imagePullSecrets, Optional<String> cpuRequest, Optional<String> memoryRequest) {
        public static Runtime of(OperatorSettings.Upgrade settings) {
            return new Runtime(settings.jobImage(), settings.jobImagePullSecrets().orElse(List.of()), settings.jobCpuRequest(),
                    settings.jobMemoryRequest());
        }

        public static Runtime image(String image) {
            return new Runtime(image, List.of(), Optional.empty(), Optional.empty());
        }

        private Map<String, Quantity> requests() {
            Map<String, Quantity> requests = new LinkedHashMap<>();
            cpuRequest.ifPresent(cpu -> requests.put("cpu", new Quantity(cpu)));
            memoryRequest.ifPresent(memory -> requests.put("memory", new Quantity(memory)));
            return requests;
        }
    }

    private UpgradeJob() {
    }

    /** What a Job does on its node: upgrade it, or only read the binaries ISO attached to it (the ISO canary). */
    enum Purpose {
        UPGRADE("upgrade-", LABEL_NODE), ISO_CANARY("iso-canary-", LABEL_ISO_CANARY);

        final String prefix;
        final String nodeLabel;

        Purpose(String prefix, String nodeLabel) {
            this.prefix = prefix;
            this.nodeLabel = nodeLabel;
        }
    }

    /** Deterministic: the same upgrade, node and attempt always give the same name, so a restarted operator finds its Job. */
    public static String name(String nodeUpgradeUid, String nodeName, String attemptKey) {
        return name(Purpose.UPGRADE, nodeUpgradeUid, nodeName, attemptKey);
    }

    static String name(Purpose purpose, String nodeUpgradeUid, String nodeName, String attemptKey) {
        String hash = ScriptTrust.sha256(nodeUpgradeUid + "/" + nodeName + "/" + (attemptKey == null ? "" : attemptKey)).substring(0, 10);
        String node = nodeName.length() > 40 ? nodeName.substring(0, 40) : nodeName;
        return (purpose.prefix + node).replaceAll("[^a-z0-9-]", "-").replaceAll("-+$", "") + "-" + hash;
    }

    public static Job build(Request request) {
        return build(request, Purpose.UPGRADE);
    }

    static Job build(Request request, Purpose purpose) {
        String name = name(purpose, request.nodeUpgradeUid(), request.nodeName(), request.attemptKey());
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_NODEUPGRADE, labelValue(request.nodeUpgradeName()));
        labels.put(purpose.nodeLabel, labelValue(request.nodeName()));
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(ANNOTATION_ACTION, request.action().name());
        annotations.put(ANNOTATION_TARGET, request.targetVersion());
        annotations.put(ANNOTATION_SCRIPT_SHA256, request.scriptSha256());
        Map<String, String> jobAnnotations = new LinkedHashMap<>(annotations);
        jobAnnotations.put(ANNOTATION_NODEUPGRADE, request.nodeUpgradeName());
        // $0 is the Job's name; "$@" are the script's arguments.
        List<String> command = new java.util.ArrayList<>(List.of("sh", "-c", launcher(LauncherPaths.IN_POD, request.scriptSha256()), name));
        command.addAll(request.arguments());
        // No owner reference: a NodeUpgrade deleted with --cascade=foreground (how GitOps tools prune) makes the
        // garbage collector delete every dependent whose owners are all being deleted in the foreground, whatever
        // their blockOwnerDeletion (kubernetes pkg/controller/garbagecollector/garbagecollector.go, attemptToDeleteItem:
        // a dependent with no "solid" owner is deleted), before any finalizer of ours could orphan it: kubeadm would be
        // killed half-way. The NodeUpgrade's finalizer deletes its finished Jobs instead; the TTL removes the rest.
        return new JobBuilder()
                .withNewMetadata()
                    .withName(name)
                    .withNamespace(request.namespace())
                    .withLabels(labels)
                    .withAnnotations(jobAnnotations)
                .endMetadata()
                .withNewSpec()
                    .withBackoffLimit(0)
                    .withActiveDeadlineSeconds((long) request.timeoutSeconds())
                    .withTtlSecondsAfterFinished(TTL_SECONDS_AFTER_FINISHED)
                    .withNewTemplate()
                        .withNewMetadata().withLabels(labels).withAnnotations(annotations).endMetadata()
                        .withSpec(podSpec(request, command))
                    .endTemplate()
                .endSpec()
                .build();
    }

    /** Privileged, in the host's PID namespace, pinned to the node and tolerating every taint: it must run on the node it upgrades. */
    private static PodSpec podSpec(Request request, List<String> command) {
        return new PodSpecBuilder()
                .withNodeName(request.nodeName())
                .withHostPID(true)
                .withAutomountServiceAccountToken(false)
                .withEnableServiceLinks(false)
                .withRestartPolicy("Never")
                .withPriorityClassName("system-node-critical")
                .withTolerations(new TolerationBuilder().withOperator("Exists").build())
                .withImagePullSecrets(request.runtime().imagePullSecrets().stream()
                        .map(LocalObjectReference::new).toList())
                .addNewContainer()
                    .withName("upgrade")
                    .withImage(request.runtime().image())
                    .withNewResources().withRequests(request.runtime().requests()).endResources()
                    .withCommand(command)
                    .withNewSecurityContext().withPrivileged(true).endSecurityContext()
                    .addNewVolumeMount().withName("host").withMountPath(LauncherPaths.IN_POD.hostRoot()).endVolumeMount()
                    .addNewVolumeMount().withName("script").withMountPath(SCRIPT_MOUNT).withReadOnly(true).endVolumeMount()
                .endContainer()
                .addNewVolume().withName("host").withNewHostPath().withPath("/").endHostPath().endVolume()
                .addNewVolume().withName("script").withNewConfigMap().withName(request.configMapName())
                    .addNewItem().withKey(request.configMapKey()).withPath(SCRIPT_FILE).endItem()
                    .withDefaultMode(0755).endConfigMap().endVolume()
                .build();
    }

    /** Where the launcher finds the mounted script and the host's root; tests run the launcher against a temporary tree. */
    record LauncherPaths(String script, String hostRoot) {
        static final LauncherPaths IN_POD = new LauncherPaths(SCRIPT_MOUNT + "/" + SCRIPT_FILE, "/host");
    }

    /**
     * The container's shell program: copy the script to the host, check the copy's sha256 against the
     * one recorded on the Job (the copy is what runs, so a ConfigMap swapped after the check is caught),
     * then run it in the host's namespaces. `sha256sum` and `cut` are in busybox and coreutils alike.
     */
    static String launcher(LauncherPaths paths, String scriptSha256) {
        String hostScript = HOST_DIR + "/$0.sh";
        StringBuilder text = new StringBuilder("set -eu\n")
                .append("mkdir -p ").append(paths.hostRoot()).append(HOST_DIR).append("\n")
                .append("cp ").append(paths.script()).append(' ').append(paths.hostRoot()).append(hostScript).append("\n");
        // It becomes part of a root shell's program: only a hex digest may.
        if (scriptSha256 == null || !scriptSha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("not a sha256 hex digest: " + scriptSha256);
        }
        text.append("actual=$(sha256sum ").append(paths.hostRoot()).append(hostScript).append(" | cut -d ' ' -f 1)\n")
                .append("if [ \"$actual\" != ").append(scriptSha256).append(" ]; then\n")
                .append("  echo \"The upgrade script's sha256 is $actual, not ").append(scriptSha256)
                .append(" as recorded on this Job (").append(ANNOTATION_SCRIPT_SHA256)
                .append("): its ConfigMap was changed after the operator checked it. Nothing was run.\" >&2\n")
                .append("  rm -f ").append(paths.hostRoot()).append(hostScript).append("\n")
                .append("  exit 1\n")
                .append("fi\n");
        // The host's shell by its path: an nsenter that prefers its own applets (busybox built with
        // FEATURE_PREFER_APPLETS) would run a bare `sh` as its own shell, with its own mount, blkid, ...
        return text.append("exec nsenter -t 1 -m -u -i -n -p -- /bin/sh ").append(hostScript).append(" \"$@\"\n").toString();
    }

    /**
     * A name as a label value: as it is when it fits, else its first characters and a hash of the whole,
     * so that two long names never share a value. Node and NodeUpgrade names may be 253 characters long.
     */
    static String labelValue(String name) {
        if (name.length() <= MAX_LABEL_VALUE) {
            return name;
        }
        String hash = ScriptTrust.sha256(name).substring(0, 10);
        String head = name.substring(0, MAX_LABEL_VALUE - hash.length() - 1).replaceAll("[^A-Za-z0-9]+$", "");
        return head + "-" + hash;
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

    /** The name of the NodeUpgrade that made the Job: its annotation, or the owner reference of a Job made by an earlier operator. */
    public static Optional<String> nodeUpgradeOf(Job job) {
        String annotated = job.getMetadata().getAnnotations() == null ? null : job.getMetadata().getAnnotations().get(ANNOTATION_NODEUPGRADE);
        if (annotated != null) {
            return Optional.of(annotated);
        }
        return job.getMetadata().getOwnerReferences() == null ? Optional.empty()
                : job.getMetadata().getOwnerReferences().stream().filter(owner -> "NodeUpgrade".equals(owner.getKind())).map(o -> o.getName()).findFirst();
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

}
