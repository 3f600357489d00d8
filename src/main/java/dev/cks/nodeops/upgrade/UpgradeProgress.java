package dev.cks.nodeops.upgrade;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;

/** The decisions of the upgrade's state machine that need no API: how far along, what a wait means, a retry. Pure. */
public final class UpgradeProgress {
    private UpgradeProgress() {
    }

    public static boolean isFinished(UpgradeNodeStatus node) {
        return node.getPhase() == Phase.Succeeded || node.getPhase() == Phase.Skipped;
    }

    /** The node's upgrade runs (its Job, or the ISO around it) or it is coming back from it: not to be given back half-way. */
    public static boolean isUnderway(UpgradeNodeStatus node) {
        return node.getPhase() == Phase.Upgrading || node.getPhase() == Phase.WaitingReady;
    }

    /**
     * Upgrading, but nothing was asked of the node or of CloudStack yet: no Job recorded and no ISO attach in
     * flight (CloudStack unreachable right after the drain, say). Such a node may still be given back.
     */
    public static boolean nothingStarted(UpgradeNodeStatus node) {
        return node.getPhase() == Phase.Upgrading && node.getJobName() == null && (node.getIsoState() == null
                || node.getIsoState() == UpgradeNodeStatus.IsoState.Attaching && node.getIsoRequestedAt() == null && node.getIsoJobId() == null);
    }

    /** "done/selected", e.g. "3/5"; skipped nodes count as done. */
    public static String progress(List<UpgradeNodeStatus> nodes) {
        return nodes.stream().filter(UpgradeProgress::isFinished).count() + "/" + nodes.size();
    }

    /**
     * The user's retry: a value of the retry annotation this upgrade has not acted on yet, on a finished
     * upgrade, starts it over — planned again from what the nodes report now. An annotation present at
     * creation is not a retry of anything. Returns the token when it started over.
     */
    public static Optional<String> takeRetry(NodeUpgrade upgrade) {
        NodeUpgradeStatus status = upgrade.getStatus();
        Map<String, String> annotations = upgrade.getMetadata().getAnnotations();
        String retry = annotations == null ? null : annotations.get(NodeAnnotations.RETRY);
        if (status.getPhase() == null) {
            status.setRetryToken(retry);
            return Optional.empty();
        }
        if (!status.finished() || !retryRequested(retry, status.getRetryToken())) {
            return Optional.empty();
        }
        status.setRetryToken(retry);
        startOver(status);
        return Optional.of(retry);
    }

    /** The upgrade is planned again from what the nodes report now: a retry, or a new target of a Continuous NodeUpgrade. */
    static void startOver(NodeUpgradeStatus status) {
        status.setNodes(new ArrayList<>());
        status.setStartedAt(null);
        status.setCompletedAt(null);
        status.setCurrentNode(null);
        status.setPhase(NodeUpgradeStatus.Phase.Pending);
        Conditions.remove(status.getConditions(), Conditions.FAILED);
        Conditions.remove(status.getConditions(), Conditions.SUCCEEDED);
        Conditions.remove(status.getConditions(), Conditions.HOLDING);
        status.setHold(null);
        IsoCanary.startOver(status);
        // The plan records the target it goes to; until then no rollout is under way at an earlier one.
        status.setTargetVersion(null);
    }

    /** True when the user's retry annotation carries a value this upgrade has not acted on yet. */
    public static boolean retryRequested(String annotation, String acted) {
        return annotation != null && !annotation.isBlank() && !annotation.equals(acted);
    }

    /** What the wait for "Ready at the target version" comes to. */
    public sealed interface ReadyWait {
    }

    public record ReadyAtTarget(String version) implements ReadyWait {
    }

    public record KeepWaiting(Instant until) implements ReadyWait {
    }

    public record ReadyTimedOut(String message) implements ReadyWait {
    }

    /** @param node what the informer knows of the node now; null when it is gone */
    public static ReadyWait readyWait(Node node, String nodeName, String targetVersion, Instant readyBy, Instant now) {
        if (node != null && UpgradePlan.isReadyAt(node, targetVersion)) {
            return new ReadyAtTarget(NodeReadiness.kubeletVersion(node));
        }
        if (readyBy != null && !now.isBefore(readyBy)) {
            String reported = node == null ? "the node no longer exists"
                    : "it reports " + NodeReadiness.kubeletVersion(node) + " and is " + NodeReadiness.state(node);
            return new ReadyTimedOut("Node " + nodeName + " was not Ready at " + targetVersion + " within readyTimeoutSeconds after its upgrade Job finished ("
                    + reported + "). Check the node's kubelet, then retry the NodeUpgrade.");
        }
        return new KeepWaiting(readyBy);
    }
}
