package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drainability.Drainability.Cause;
import dev.cks.nodeops.drainability.Drainability.Verdict;

class BlockedNodesTest {
    private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");
    private static final Instant T1 = T0.plusSeconds(300);

    private static Verdict blocked(String node, String... reasons) {
        return new Verdict(node, Set.of(Cause.BarePod), List.of(reasons));
    }

    private static Verdict drainable(String node) {
        return new Verdict(node, Set.of(), List.of());
    }

    @Test
    void aNodeIsAnnouncedOnceWhenItBecomesBlockedAndOnceWhenItIsDrainableAgain() {
        BlockedNodes.Plan first = BlockedNodes.plan(List.of(blocked("w-1", "bare pod"), drainable("w-2")), List.of(), List.of(), T0);
        assertThat(first.newlyBlocked()).extracting(Verdict::node).containsExactly("w-1");
        assertThat(first.listed()).singleElement().satisfies(n -> {
            assertThat(n.getName()).isEqualTo("w-1");
            assertThat(n.getSince()).isEqualTo("2026-12-03T10:00:00Z");
            assertThat(n.getReasons()).containsExactly("bare pod");
        });
        assertThat(first.blockedCount()).isEqualTo(1);
        assertThat(first.drainableCount()).isEqualTo(1);

        BlockedNodes.Plan second = BlockedNodes.plan(List.of(blocked("w-1", "bare pod"), drainable("w-2")), first.listed(), first.reportedBlocked(), T1);
        assertThat(second.newlyBlocked()).as("still blocked: nothing new to say").isEmpty();
        assertThat(second.drainableAgain()).isEmpty();
        assertThat(second.listed().get(0).getSince()).as("blocked since the first pass").isEqualTo("2026-12-03T10:00:00Z");

        BlockedNodes.Plan third = BlockedNodes.plan(List.of(drainable("w-1"), drainable("w-2")), second.listed(), second.reportedBlocked(), T1);
        assertThat(third.drainableAgain()).containsExactly("w-1");
        assertThat(third.listed()).isEmpty();
        assertThat(third.reportedBlocked()).isEmpty();
    }

    @Test
    void aBlockedNodeThatIsGoneIsNeitherListedNorAnnouncedDrainable() {
        BlockedNodes.Plan first = BlockedNodes.plan(List.of(blocked("w-1", "x")), List.of(), List.of(), T0);

        BlockedNodes.Plan gone = BlockedNodes.plan(List.of(drainable("w-2")), first.listed(), first.reportedBlocked(), T1);

        assertThat(gone.drainableAgain()).isEmpty();
        assertThat(gone.reportedBlocked()).isEmpty();
    }

    @Test
    void theStatusListsAtMostTheLongestBlockedNodesWithBoundedReasonsAndCountsTheRest() {
        List<Verdict> before = IntStream.range(0, 10).mapToObj(i -> blocked(String.format("old-%02d", i), "r")).toList();
        BlockedNodes.Plan first = BlockedNodes.plan(before, List.of(), List.of(), T0);
        List<Verdict> now = new ArrayList<>(before);
        List<String> many = IntStream.range(0, 9).mapToObj(i -> "reason " + i + " " + "x".repeat(600)).toList();
        IntStream.range(0, 1000).forEach(i -> now.add(blocked(String.format("new-%04d", i), many.toArray(String[]::new))));
        IntStream.range(0, 500).forEach(i -> now.add(drainable("ok-" + i)));

        BlockedNodes.Plan plan = BlockedNodes.plan(now, first.listed(), first.reportedBlocked(), T1);

        assertThat(plan.blockedCount()).isEqualTo(1010);
        assertThat(plan.drainableCount()).isEqualTo(500);
        assertThat(plan.listed()).hasSize(BlockedNodes.MAX_LISTED);
        assertThat(plan.listed().subList(0, 10)).as("the longest blocked first").extracting(BlockedNode::getName)
                .containsExactlyElementsOf(before.stream().map(Verdict::node).toList());
        BlockedNode crowded = plan.listed().get(10);
        assertThat(crowded.getReasons()).hasSize(BlockedNodes.MAX_REASONS);
        assertThat(crowded.getReasons().get(0)).hasSize(BlockedNodes.MAX_REASON_LENGTH);
        assertThat(crowded.getReasons().get(BlockedNodes.MAX_REASONS - 1)).isEqualTo("… and 5 more");
        assertThat(plan.newlyBlocked()).hasSize(1000);
        assertThat(plan.reportedBlocked()).hasSize(1010);
    }
}
