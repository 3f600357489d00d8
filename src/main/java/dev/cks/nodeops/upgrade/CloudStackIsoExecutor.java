package dev.cks.nodeops.upgrade;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackAccess.ClusterResolution;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.KubernetesSupportedVersion;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.nodes.VersionMatch;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The CloudStack side of the CloudStackIso executor: the version's binaries ISO attached to the node's
 * VM before the Job runs and detached after it, and the operator's copy of CKS's node script.
 */
final class CloudStackIsoExecutor {
    static final String SCRIPT_CONFIGMAP = "cks-node-operator-upgrade-script";
    static final String SCRIPT_KEY = "upgrade-kubernetes.sh";

    /** Where a node's VM is, and which ISO it gets. */
    record Attachment(String clusterId, String vmId, String isoId) {
    }

    /** Thrown with a sentence for the node's error when the ISO executor cannot run at all (nothing to retry). */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    private final CloudStackAccess access;
    private final KubernetesClient kubernetes;

    CloudStackIsoExecutor(CloudStackAccess access, KubernetesClient kubernetes) {
        this.access = access;
        this.kubernetes = kubernetes;
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

    /** The CKS cluster, refusing when CloudStack itself is changing it: we wait instead of fighting it. */
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

    /** Attaches the ISO; idempotent, so a restart between attaching and recording it does no harm. */
    Attachment attach(KubernetesCluster cluster, String nodeName, String versionId, String targetVersion) {
        CloudStackClient client = access.client();
        Attachment chosen = choose(cluster, nodeName, versionId, targetVersion);
        VirtualMachine vm = vmOf(cluster, nodeName).orElseThrow();
        String isoId = chosen.isoId();
        if (!isoId.equals(vm.isoId())) {
            if (vm.isoId() != null) {
                // A VM has one CD-ROM: an ISO left from an earlier upgrade must go first.
                client.detachIso(vm.id());
            }
            client.attachIso(isoId, vm.id());
        }
        return new Attachment(cluster.id(), vm.id(), isoId);
    }

    void detach(String vmId) {
        try {
            access.client().detachIso(vmId);
        } catch (dev.cks.nodeops.cloudstack.CloudStackException e) {
            // Already detached (e.g. by a run that stopped before recording it): nothing left to do.
            if (e.getMessage() == null || !e.getMessage().contains("No ISO is attached")) {
                throw e;
            }
        }
    }

    /** The operator's copy of CKS's node script, (re)written so it always matches the running operator. */
    void ensureScript(String namespace) {
        kubernetes.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(SCRIPT_CONFIGMAP).withNamespace(namespace)
                .addToLabels("app.kubernetes.io/managed-by", "cks-node-operator").endMetadata()
                .addToData(SCRIPT_KEY, script())
                .build()).createOr(existing -> existing.update());
    }

    static String script() {
        try (InputStream in = CloudStackIsoExecutor.class.getResourceAsStream("/upgrade/" + SCRIPT_KEY)) {
            if (in == null) {
                throw new IllegalStateException("the node script /upgrade/" + SCRIPT_KEY + " is missing from the operator's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** CKS's arguments: `<version> <isFirstControl> <isOld> <ejectIso>`; the ISO is detached through the API instead of ejected. */
    static List<String> arguments(String targetVersion, UpgradeNodeStatus.Action action) {
        String version = VersionMatch.normalize(targetVersion).orElse(targetVersion);
        return List.of(version, Boolean.toString(action == UpgradeNodeStatus.Action.Apply), "false", "false");
    }
}
