package dev.cks.nodeops.upgrade;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.nodes.VersionMatch;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;

/**
 * The decisions of a Continuous NodeUpgrade (docs/continuous.md). Pure. Once its rollout is over it looks at the
 * nodes its selector matches: one below the target that is Ready and does not opt out is planned again, as a rollout
 * plans it, and then goes through every rule of a rollout; one newer than the target is reported and never taken
 * down; two Continuous NodeUpgrades over one node would take turns upgrading it to their targets, so the later is refused.
 */
final class ContinuousHold {
    /** A node planned again, and the sentence its event says. */
    record Correction(UpgradeNodeStatus entry, String message) {
    }

    /**
     * What a look at the selected nodes found.
     *
     * @param corrections nodes to upgrade now, in plan order
     * @param belowTarget selected nodes older than the target, corrected now or not
     * @param newer selected nodes newer than the target, as "name (version)"
     * @param notNow nodes below the target left for later, as "name (why)": NotReady, opted out
     * @param gone status entries of nodes that no longer exist and are done with: they leave the status
     */
    record Scan(List<Correction> corrections, int belowTarget, List<String> newer, List<String> notNow, Set<String> gone) {
    }

    /** Other Continuous NodeUpgrades that select a node this one selects: created before it, and after it. */
    record Overlaps(Map<String, List<String>> earlier, Map<String, List<String>> later) {
    }

    private ContinuousHold() {
    }

    /**
     * A Continuous rollout's plan: a node newer than the target is skipped (a node never goes down to the target), and
     * each node to upgrade records {@code attempt}, so its Job is told apart from the node's Jobs of earlier rollouts.
     */
    static List<UpgradeNodeStatus> neverDown(List<UpgradeNodeStatus> planned, String target, String attempt) {
        for (UpgradeNodeStatus entry : planned) {
            if (entry.getPhase() != Phase.Pending) {
                continue;
            }
            if (newerThan(entry.getFromVersion(), target)) {
                entry.setAction(Action.Skip);
                entry.setPhase(Phase.Skipped);
                entry.setSkipReason(newerReason(entry.getFromVersion(), target));
            } else {
                entry.setAttempt(attempt);
            }
        }
        return planned;
    }

    /**
     * @param cluster every Node of the cluster
     * @param entries the status' nodes: a node Pending or in progress there is left to the rollout
     */
    static Scan scan(List<Node> cluster, NodeSelection selector, String target, List<UpgradeNodeStatus> entries, Instant now) {
        Map<String, UpgradeNodeStatus> known = entries.stream().collect(Collectors.toMap(UpgradeNodeStatus::getName, Function.identity(), (a, b) -> b));
        Map<String, Node> byName = cluster.stream().collect(Collectors.toMap(n -> n.getMetadata().getName(), Function.identity(), (a, b) -> a));
        List<Correction> corrections = new ArrayList<>();
        List<String> newer = new ArrayList<>();
        List<String> notNow = new ArrayList<>();
        int below = 0;
        for (UpgradeNodeStatus planned : UpgradePlan.plan(cluster, selector, target)) {
            String version = planned.getFromVersion();
            Optional<Integer> order = VersionMatch.compare(version, target);
            if (order.isEmpty() || order.get() == 0) {
                continue;
            }
            if (order.get() > 0) {
                newer.add(planned.getName() + " (" + version + ")");
                continue;
            }
            below++;
            UpgradeNodeStatus before = known.get(planned.getName());
            if (before != null && (before.getPhase() == Phase.Pending || UpgradeRollout.inProgress(before))) {
                continue;
            }
            if (planned.getPhase() == Phase.Skipped) {
                notNow.add(planned.getName() + " (" + planned.getSkipReason() + ")");
                continue;
            }
            if (!NodeReadiness.isReady(byName.get(planned.getName()))) {
                notNow.add(planned.getName() + " (not Ready: it is upgraded once it is)");
                continue;
            }
            planned.setAttempt(attempt(now));
            corrections.add(new Correction(planned, "Node " + planned.getName() + " runs " + version + ", below the target " + target + " ("
                    + why(before) + "): it is upgraded like any node of a rollout."));
        }
        Set<String> gone = entries.stream().filter(e -> !byName.containsKey(e.getName()) && UpgradeProgress.isFinished(e))
                .map(UpgradeNodeStatus::getName).collect(Collectors.toSet());
        return new Scan(corrections, below, newer, notNow, gone);
    }

    /** When a node was planned, to the millisecond: two plans of one node never share it, even a rollout replanned at once. */
    static String attempt(Instant now) {
        return now.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString();
    }

    private static String why(UpgradeNodeStatus before) {
        if (before == null) {
            return "it joined";
        }
        if (before.getPhase() == Phase.Skipped && before.getVersion() == null) {
            return "it was not upgraded before: " + before.getSkipReason();
        }
        return "it was at " + (before.getVersion() == null ? "the target" : before.getVersion()) + " before, and came back older";
    }

    /** The status' entries with the corrections in place of the nodes' earlier entries; new nodes at the end. */
    static List<UpgradeNodeStatus> withCorrections(List<UpgradeNodeStatus> entries, List<Correction> corrections) {
        Map<String, UpgradeNodeStatus> merged = new LinkedHashMap<>();
        entries.forEach(e -> merged.put(e.getName(), e));
        corrections.forEach(c -> merged.put(c.entry().getName(), c.entry()));
        return new ArrayList<>(merged.values());
    }

    /** The node upgraded last after the hold began at {@code since} (a correction that is over), if any. */
    static Optional<UpgradeNodeStatus> lastCorrected(List<UpgradeNodeStatus> entries, String since) {
        Instant from = Timestamps.parse(since);
        if (from == null) {
            return Optional.empty();
        }
        return entries.stream().filter(e -> e.getPhase() == Phase.Succeeded && Timestamps.parse(e.getCompletedAt()) != null
                && Timestamps.parse(e.getCompletedAt()).isAfter(from)).max(Comparator.comparing(e -> Timestamps.parse(e.getCompletedAt())));
    }

    /**
     * The other Continuous NodeUpgrades (not being deleted) that select one of the nodes this one selects now, with those
     * nodes. Earlier is by creation, then by name, so both sides of an overlap agree on which one goes on.
     */
    static Overlaps overlaps(NodeUpgrade self, List<NodeUpgrade> all, List<Node> cluster) {
        Map<String, List<String>> earlier = new LinkedHashMap<>();
        Map<String, List<String>> later = new LinkedHashMap<>();
        List<Node> mine = cluster.stream().filter(self.getSpec().nodeSelection()::selects).toList();
        for (NodeUpgrade other : all.stream().sorted(Comparator.comparing(u -> u.getMetadata().getName())).toList()) {
            if (other.getMetadata().getName().equals(self.getMetadata().getName()) || other.getSpec() == null || !other.getSpec().continuous()
                    || other.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            NodeSelection theirs = other.getSpec().nodeSelection();
            List<String> shared = mine.stream().filter(theirs::selects)
                    .map(n -> n.getMetadata().getName()).sorted().toList();
            if (!shared.isEmpty()) {
                (createdBefore(other, self) ? earlier : later).put(other.getMetadata().getName(), shared);
            }
        }
        return new Overlaps(earlier, later);
    }

    private static boolean createdBefore(NodeUpgrade a, NodeUpgrade b) {
        Instant left = Timestamps.parse(a.getMetadata().getCreationTimestamp());
        Instant right = Timestamps.parse(b.getMetadata().getCreationTimestamp());
        if (left != null && right != null && !left.equals(right)) {
            return left.isBefore(right);
        }
        return a.getMetadata().getName().compareTo(b.getMetadata().getName()) < 0;
    }

    /** The refusal of the later of two overlapping Continuous NodeUpgrades, naming the earlier one(s) and the nodes. */
    static String overlapRefusal(NodeUpgrade self, Map<String, List<String>> earlier) {
        return "Refused: Continuous NodeUpgrade " + self.getMetadata().getName() + " selects nodes that Continuous NodeUpgrade "
                + earlier.entrySet().stream().map(e -> e.getKey() + " (created earlier) holds: " + String.join(", ", e.getValue()))
                        .collect(Collectors.joining("; and "))
                + ". Two would take turns upgrading those nodes to their own targets. Narrow spec.selector of one, or delete one"
                + " and retry the other (annotation nodeops.cks.dev/retry). Nothing was cordoned.";
    }

    /**
     * A Continuous NodeUpgrade whose spec.targetVersion changed: true when the new rollout begins now (no node is in
     * progress at the old target); while one is, it finishes at the version its Job was made for.
     */
    static boolean newRollout(NodeUpgradeSpec spec, NodeUpgradeStatus status) {
        return targetChanged(spec, status) && status.getNodes().stream().noneMatch(UpgradeRollout::inProgress);
    }

    static boolean targetChanged(NodeUpgradeSpec spec, NodeUpgradeStatus status) {
        return spec.continuous() && status.getTargetVersion() != null && !VersionMatch.matches(spec.getTargetVersion(), status.getTargetVersion());
    }

    static boolean newerThan(String version, String target) {
        return VersionMatch.compare(version, target).map(order -> order > 0).orElse(false);
    }

    static String newerReason(String version, String target) {
        return "it runs " + version + ", newer than the target " + target + ": a NodeUpgrade never takes a node down";
    }
}
