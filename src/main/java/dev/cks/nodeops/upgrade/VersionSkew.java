package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.VersionMatch;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Refuses a NodeUpgrade whose plan would leave a kubelet outside the Kubernetes version skew policy
 * (https://kubernetes.io/releases/version-skew-policy/#kubelet), quoting the rule. Pure.
 *
 * <p>When the plan upgrades the control plane ({@code kubeadm upgrade apply}), the API server is at the
 * target before any other node is touched; otherwise it stays where it is. kubeadm upgrades the control
 * plane by one minor version at a time.
 */
public final class VersionSkew {
    static final String RULE = "the Kubernetes version skew policy: \"kubelet must not be newer than kube-apiserver, and may be up to three "
            + "minor versions older (kubelet < 1.25 may only be up to two minor versions older)\"";
    static final String KUBEADM_RULE = "kubeadm upgrades the control plane one minor version at a time (\"skipping MINOR versions when "
            + "upgrading is unsupported\")";

    record Version(int major, int minor, String text) {
        static Optional<Version> of(String text) {
            return VersionMatch.normalize(text).map(normal -> {
                String[] parts = normal.split("[.-]");
                return new Version(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), "v" + normal);
            });
        }

        int minorsAbove(Version other) {
            return major == other.major ? minor - other.minor : (major - other.major) * 100;
        }

        /** How many minor versions a kubelet of this version may be behind the API server. */
        int supportedLag() {
            return major == 1 && minor < 25 ? 2 : 3;
        }

        String minorText() {
            return "v" + major + "." + minor;
        }
    }

    private VersionSkew() {
    }

    /**
     * @param plan the planned nodes
     * @param allNodes every Node of the cluster (those not upgraded keep their kubelets)
     * @param apiServers the versions the API servers report; the oldest decides
     * @return the refusal, empty when the plan stays within the policy or no API server version is known
     */
    public static Optional<String> refusal(List<UpgradeNodeStatus> plan, List<Node> allNodes, List<String> apiServers, String targetVersion) {
        Optional<Version> target = Version.of(targetVersion);
        Optional<Version> server = apiServers.stream().map(Version::of).flatMap(Optional::stream)
                .min((a, b) -> a.minorsAbove(b));
        if (target.isEmpty() || server.isEmpty()) {
            return Optional.empty();
        }
        boolean upgradesControlPlane = plan.stream().anyMatch(n -> n.getAction() == UpgradeNodeStatus.Action.Apply);
        List<String> problems = new ArrayList<>();
        Version after = server.get();
        if (upgradesControlPlane) {
            int jump = target.get().minorsAbove(server.get());
            if (jump > 1) {
                return Optional.of("Refused: the control plane is at " + server.get().text() + " and " + targetVersion + " is " + jump
                        + " minor versions above it; " + KUBEADM_RULE + ". Upgrade to " + server.get().major() + "." + (server.get().minor() + 1)
                        + " first. Nothing was cordoned.");
            }
            after = target.get();
        } else if (target.get().minorsAbove(server.get()) > 0) {
            problems.add("the API server is at " + server.get().text() + " and this NodeUpgrade does not upgrade the control plane "
                    + "(no control-plane node gets kubeadm upgrade apply), so kubelets at " + targetVersion + " would be newer than it");
        }
        if (after.minorsAbove(target.get()) > target.get().supportedLag()) {
            problems.add("kubelets at " + targetVersion + " would be " + after.minorsAbove(target.get()) + " minor versions older than the API server at "
                    + after.text());
        }
        List<String> leftBehind = leftTooFarBehind(plan, allNodes, after);
        if (!leftBehind.isEmpty()) {
            problems.add("the API server would be at " + after.minorText() + " while nodes this NodeUpgrade does not upgrade stay too far behind: "
                    + String.join(", ", leftBehind));
        }
        if (problems.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("Refused by " + RULE + ": " + String.join("; ", problems)
                + ". Upgrade the control plane first (select its nodes too), or choose a target within the policy. Nothing was cordoned.");
    }

    /** Nodes outside the plan whose kubelets would lag the API server at {@code apiServerAfter} by more than their policy allows, as "name (version)". */
    private static List<String> leftTooFarBehind(List<UpgradeNodeStatus> plan, List<Node> allNodes, Version apiServerAfter) {
        Set<String> upgraded = plan.stream().filter(n -> n.getAction() != UpgradeNodeStatus.Action.Skip).map(UpgradeNodeStatus::getName)
                .collect(Collectors.toSet());
        return allNodes.stream().filter(n -> !upgraded.contains(n.getMetadata().getName()))
                .filter(n -> Version.of(NodeReadiness.kubeletVersion(n)).map(v -> apiServerAfter.minorsAbove(v) > v.supportedLag()).orElse(false))
                .map(n -> n.getMetadata().getName() + " (" + NodeReadiness.kubeletVersion(n) + ")").sorted().toList();
    }
}
