package dev.cks.nodeops.drainability;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cks.nodeops.common.Timestamps;

/**
 * From one pass's verdicts and what the status held before: what status lists and what is announced. Pure. The
 * status stays bounded whatever the cluster's size: at most {@value #MAX_LISTED} blocked nodes with their reasons
 * (the longest blocked first, as those are the ones an alert is about), drainable nodes only counted, and the
 * names of the blocked nodes already announced, so each change is announced once across passes and restarts.
 */
final class BlockedNodes {
    static final int MAX_LISTED = 100;
    static final int MAX_REASONS = 5;
    static final int MAX_REASON_LENGTH = 500;
    /** About 60 kB of names; beyond it (a cluster of more blocked nodes) the rest are announced again on each pass. */
    static final int MAX_REPORTED = 2000;

    /**
     * @param newlyBlocked blocked now and not announced before
     * @param drainableAgain announced blocked before and drainable now (a node that is gone is neither)
     */
    record Plan(List<BlockedNode> listed, int blockedCount, int drainableCount, List<Drainability.Verdict> newlyBlocked,
            List<String> drainableAgain, List<String> reportedBlocked) {
    }

    private BlockedNodes() {
    }

    static Plan plan(List<Drainability.Verdict> verdicts, List<BlockedNode> listedBefore, List<String> reportedBefore, Instant now) {
        Map<String, String> since = new HashMap<>();
        listedBefore.forEach(node -> since.put(node.getName(), node.getSince()));
        Set<String> reported = new HashSet<>(reportedBefore);
        List<Drainability.Verdict> blocked = verdicts.stream().filter(v -> !v.drainable()).toList();
        String nowText = Timestamps.format(now);
        List<BlockedNode> listed = blocked.stream()
                .map(v -> new BlockedNode(v.node(), since.getOrDefault(v.node(), nowText), List.copyOf(v.causes()), bounded(v.reasons())))
                .sorted(Comparator.comparing((BlockedNode n) -> Timestamps.parse(n.getSince())).thenComparing(BlockedNode::getName))
                .limit(MAX_LISTED).toList();
        List<Drainability.Verdict> newlyBlocked = blocked.stream().filter(v -> !reported.contains(v.node())).toList();
        List<String> drainableAgain = verdicts.stream().filter(v -> v.drainable() && reported.contains(v.node())).map(Drainability.Verdict::node)
                .toList();
        List<String> reportedNow = blocked.stream().map(Drainability.Verdict::node).sorted().limit(MAX_REPORTED).toList();
        return new Plan(listed, blocked.size(), verdicts.size() - blocked.size(), newlyBlocked, drainableAgain, reportedNow);
    }

    private static List<String> bounded(List<String> reasons) {
        List<String> shown = reasons.stream().limit(MAX_REASONS)
                .map(r -> r.length() <= MAX_REASON_LENGTH ? r : r.substring(0, MAX_REASON_LENGTH - 1) + "…").toList();
        if (reasons.size() <= MAX_REASONS) {
            return shown;
        }
        List<String> withMore = new java.util.ArrayList<>(shown.subList(0, MAX_REASONS - 1));
        withMore.add("… and " + (reasons.size() - MAX_REASONS + 1) + " more");
        return withMore;
    }
}
