package dev.cks.nodeops.upgrade;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.KubernetesSupportedVersion;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.nodes.VersionMatch;
import dev.cks.nodeops.operation.PermissionPreflight;
import dev.cks.nodeops.operation.PermissionPreflight.Need;

/**
 * The CloudStack side of the CloudStackIso executor: which VM and ISO a node's upgrade uses, the
 * attach and detach as CloudStack jobs the caller polls (a reconcile never waits for one), and the
 * operator's copy of CKS's node script.
 */
final class CloudStackIsoExecutor {
    static final String SCRIPT_CONFIGMAP = "cks-node-operator-upgrade-script";
    static final String SCRIPT_KEY = "upgrade-kubernetes.sh";
    /** The ISO canary's read-only check, in the same ConfigMap (docs/upgrade.md, "ISO canary"). */
    static final String CANARY_KEY = "verify-iso.sh";

    /** Where a node's VM is, and which ISO it gets. */
    record Attachment(String clusterId, String vmId, String isoId) {
    }

    /** Thrown with a sentence for the node's error when the ISO executor cannot run at all (nothing to retry). */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    /** Every command a CloudStackIso upgrade sends, for the permission preflight. */
    static final List<Need> NEEDS = List.of(PermissionPreflight.FIND_CLUSTER,
            Need.of(CloudStackCommand.LIST_KUBERNETES_SUPPORTED_VERSIONS, "finds the target version's binaries ISO"),
            Need.of(CloudStackCommand.LIST_VIRTUAL_MACHINES, "reads whether a node's VM has the ISO"),
            Need.of(CloudStackCommand.ATTACH_ISO, "attaches the binaries ISO to each node's VM before its upgrade"),
            Need.of(CloudStackCommand.DETACH_ISO, "detaches it afterwards"),
            PermissionPreflight.FOLLOW_JOBS, PermissionPreflight.LIST_JOBS);

    private final CloudStackAccess access;

    CloudStackIsoExecutor(CloudStackAccess access) {
        this.access = access;
    }

    /** Whether the keys may call what the upgrade sends: the sentence when they may not ({@link PermissionPreflight}). */
    Optional<String> permissionRefusal(String operation) {
        CloudStackClient client = access.client();
        return PermissionPreflight.refusal(operation, NEEDS, client.permissions(PermissionPreflight.commands(NEEDS)));
    }

    /** Pure: the ISO of the spec's version id, or of the supported version whose semantic version is the target. */
    static String pickIso(List<KubernetesSupportedVersion> versions, String versionId, String targetVersion) {
        Optional<KubernetesSupportedVersion> chosen = versionId != null && !versionId.isBlank()
                ? versions.stream().filter(v -> versionId.equals(v.id())).findFirst()
                : versions.stream().filter(v -> VersionMatch.matches(v.semanticVersion(), targetVersion)).findFirst();
        if (chosen.isEmpty()) {
            throw new Refused(versionId != null && !versionId.isBlank()
                    ? "CloudStack has no Kubernetes supported version with id " + versionId + "; fix executor.cloudStackIso.kubernetesVersionId."
                    : "CloudStack has no Kubernetes supported version " + targetVersion
                            + "; add it with addKubernetesSupportedVersion (its binaries ISO), or use the Script executor.");
        }
        KubernetesSupportedVersion version = chosen.get();
        if (!VersionMatch.matches(version.semanticVersion(), targetVersion)) {
            throw new Refused("CloudStack's Kubernetes supported version " + version.id() + " is " + version.semanticVersion()
                    + ", not the targetVersion " + targetVersion + "; make them agree.");
        }
        if (version.isoId() == null || !version.isUsable()) {
            throw new Refused("CloudStack's Kubernetes supported version " + version.semanticVersion() + " is not usable (state "
                    + version.state() + ", ISO " + version.isoState() + "); wait until its ISO is Ready, or enable the version.");
        }
        return version.isoId();
    }

    /** Pure: the VM of a node in the CKS cluster's VM map (by name, or the node's FQDN). */
    static Optional<VirtualMachine> vmOf(KubernetesCluster cluster, String nodeName) {
        return cluster.virtualMachines().stream().filter(vm -> ClusterResolution.sameHost(nodeName, vm.name())).findFirst();
    }

    /** Why the CloudStack API URL is a risk, when it is plain http. */
    Optional<String> plainHttpWarning() {
        return access.client().plainHttpWarning();
    }

    /** The CKS cluster of these nodes. */
    KubernetesCluster cluster(String knownClusterId, List<String> nodeNames) {
        ClusterResolution resolution = access.resolveCluster(knownClusterId, nodeNames);
        return resolution.cluster().orElseThrow(() -> new Refused("The CKS cluster could not be found: " + resolution.refusal() + "."));
    }

    /** Which VM and ISO a node's upgrade uses, without attaching anything: checked before the node is cordoned. */
    Attachment choose(KubernetesCluster cluster, String nodeName, String versionId, String targetVersion) {
        VirtualMachine vm = vmOf(cluster, nodeName).orElseThrow(() -> new Refused("Node " + nodeName + " is not in the VM map of CKS cluster "
                + cluster.name() + " (" + cluster.id() + "); the CloudStackIso executor needs its VM. Use the Script executor for this node."));
        return new Attachment(cluster.id(), vm.id(), pickIso(access.client().listKubernetesSupportedVersions(), versionId, targetVersion));
    }

    /**
     * The ISO the VM carries now, read from the VM itself (listVirtualMachines with details=iso): the
     * cluster's VM map never carries it (KubernetesClusterManagerImpl builds its rows with NIC details only).
     */
    Optional<String> attachedIso(KubernetesCluster cluster, String vmId) {
        return access.client().findVirtualMachine(cluster.owner(), vmId).map(VirtualMachine::isoId);
    }

    /** What CloudStack records for the cluster's version and its nodes' versions, as a sentence when it is not {@code target}. */
    Optional<String> staleRecord(String clusterId, List<String> nodes, String target) {
        KubernetesCluster cluster = cluster(clusterId, nodes);
        return CloudStackRecord.staleness(cluster, access.client().listKubernetesSupportedVersions(), nodes, target);
    }

    String startAttach(Attachment attachment) {
        return client().startAttachIso(attachment.isoId(), attachment.vmId());
    }

    String startDetach(String vmId) {
        return access.client().startDetachIso(vmId);
    }

    /** CloudStack's answer to detaching a VM that has no ISO (TemplateManagerImpl.detachIso): it is detached already. */
    static boolean foundNoIso(String errorText) {
        return errorText != null && errorText.contains(CloudStackException.NO_ISO_ATTACHED);
    }

    /** The client every CloudStack call of the executor goes through (the keys' Secret as it is now). */
    CloudStackClient client() {
        return access.client();
    }

    /** The operator's copy of CKS's node script. */
    static String script() {
        return shipped(SCRIPT_KEY);
    }

    /** The ISO canary's script: it only reads the attached ISO. */
    static String canaryScript() {
        return shipped(CANARY_KEY);
    }

    /** Both scripts the executor runs on nodes, by their key in {@link #SCRIPT_CONFIGMAP}. */
    static Map<String, String> scripts() {
        return Map.of(SCRIPT_KEY, script(), CANARY_KEY, canaryScript());
    }

    private static String shipped(String key) {
        try (InputStream in = CloudStackIsoExecutor.class.getResourceAsStream("/upgrade/" + key)) {
            if (in == null) {
                throw new IllegalStateException("the node script /upgrade/" + key + " is missing from the operator's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * CKS's arguments, `<version> <isFirstControl> <isOld> <ejectIso>`, and ours, `<applyAddons>`; the ISO is detached
     * through the API instead of ejected.
     */
    static List<String> arguments(String targetVersion, UpgradeNodeStatus.Action action, boolean applyAddons) {
        String version = VersionMatch.normalize(targetVersion).orElse(targetVersion);
        return List.of(version, Boolean.toString(action == UpgradeNodeStatus.Action.Apply), "false", "false", Boolean.toString(applyAddons));
    }
}
