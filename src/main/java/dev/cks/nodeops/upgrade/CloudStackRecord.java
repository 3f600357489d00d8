package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.KubernetesSupportedVersion;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.nodes.VersionMatch;

/**
 * Pure: what CloudStack still records after an upgrade it did not do. Only CloudStack's own
 * upgradeKubernetesCluster rewrites the cluster's version (at its end) and each node's
 * {@code kubernetesnodeversion} (4.20+, after it checked the kubelet); no API sets them otherwise
 * (KubernetesClusterUpgradeWorker, KubernetesClusterManagerImpl). Its next scale-up or upgrade then works
 * from the old record, so a NodeUpgrade says so when it ends.
 */
final class CloudStackRecord {
    private CloudStackRecord() {
    }

    /**
     * A sentence naming what CloudStack records at another version than {@code target} (the cluster, and
     * those of {@code nodes} whose VM row has a recorded version), or empty when its record matches.
     */
    static Optional<String> staleness(KubernetesCluster cluster, List<KubernetesSupportedVersion> versions, Collection<String> nodes,
            String target) {
        List<String> stale = new ArrayList<>();
        versions.stream().filter(v -> v.id() != null && v.id().equals(cluster.kubernetesVersionId())).findFirst()
                .map(KubernetesSupportedVersion::semanticVersion)
                .filter(recorded -> !VersionMatch.matches(recorded, target))
                .ifPresent(recorded -> stale.add("Kubernetes " + recorded + " for CKS cluster " + cluster.name()));
        for (String node : nodes) {
            CloudStackIsoExecutor.vmOf(cluster, node).map(VirtualMachine::kubernetesNodeVersion)
                    .filter(recorded -> !VersionMatch.matches(recorded, target))
                    .ifPresent(recorded -> stale.add(recorded + " for node " + node));
        }
        if (stale.isEmpty()) {
            return Optional.empty();
        }
        // With autoscaling on, scale-ups need no person: say that they too join at the recorded version.
        String autoscaling = cluster.isAutoscalingEnabled() ? " CKS autoscaling is on for " + cluster.name() + " (" + cluster.minSize() + " to "
                + cluster.maxSize() + " workers): every node it adds joins at the recorded version, not " + target + ", until then." : "";
        return Optional.of("CloudStack still records " + String.join(", ", stale) + ", not " + target + ": its next scale-up or upgrade "
                + "works from that record. Run upgradeKubernetesCluster to " + target + " before scaling up (docs/upgrade.md, "
                + "\"CloudStack's record\"); VMMapAudit reports each stale node as VersionRecordStale." + autoscaling);
    }
}
