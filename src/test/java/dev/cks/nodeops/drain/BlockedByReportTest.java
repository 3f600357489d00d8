package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import dev.cks.nodeops.drain.BlockedByReport.Cause;
import dev.cks.nodeops.drain.BlockedByReport.StuckPod;

class BlockedByReportTest {
    private static final BudgetNumbers WEB = new BudgetNumbers("shop", "web-pdb", 3, 3, 0, 3);

    @Test
    void groupsPodsByTheBudgetThatBlocksThemWithItsNumbers() {
        String report = BlockedByReport.format("w-1", List.of(
                new StuckPod("shop", "web-7d9a", Cause.DISRUPTION_BUDGET, "shop/web-pdb"),
                new StuckPod("shop", "web-7d9b", Cause.DISRUPTION_BUDGET, "shop/web-pdb"),
                new StuckPod("shop", "stuck", Cause.TERMINATING, "deleted 45s ago, finalizers example.com/hold"),
                new StuckPod("ops", "solo", Cause.REFUSED, "cannot delete pods that no controller manages, they would not be recreated (use force: true): ops/solo"),
                new StuckPod("ops", "x", Cause.API_ERROR, "HTTP 500: boom")),
                Map.of("shop/web-pdb", WEB), "evicting shop/web-7d9b: HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.");
        assertThat(report).isEqualTo("""
                Node w-1 still has 5 pods that could not be drained:
                * pdb shop/web-pdb: needs 3 healthy, has 3, 0 disruptions allowed (pods shop/web-7d9a, shop/web-7d9b)
                * terminating (use skipWaitForDeleteTimeoutSeconds to stop waiting for them): shop/stuck (deleted 45s ago, finalizers example.com/hold)
                * cannot delete pods that no controller manages, they would not be recreated (use force: true): ops/solo
                * API error: ops/x (HTTP 500: boom)
                Last API error: evicting shop/web-7d9b: HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.""");
    }

    @Test
    void podsTheAttemptDidNotReachAreToldApart() {
        String report = BlockedByReport.format("w-1", List.of(new StuckPod("shop", "web-1", Cause.NOT_EVICTED_IN_TIME, "")), Map.of(), null);
        assertThat(report).endsWith("* evictable now, but not evicted before the attempt ended (a longer timeoutSeconds or another attempt would take them): shop/web-1");
    }

    @Test
    void nothingStuckMeansAnEmptyReport() {
        assertThat(BlockedByReport.format("w-1", List.of(), Map.of(), null)).isEmpty();
    }

    @Test
    void aBudgetWithoutNumbersShowsTheApiMessage() {
        String report = BlockedByReport.format("w-1", List.of(new StuckPod("shop", "web-1", Cause.DISRUPTION_BUDGET, "Cannot evict pod")), Map.of(), null);
        assertThat(report).contains("* eviction refused with 429 (Cannot evict pod) (pods shop/web-1)");
    }

    @Test
    void oneDisruptionIsSingular() {
        assertThat(new BudgetNumbers("a", "b", 2, 3, 1, 3).describe()).isEqualTo("pdb a/b: needs 2 healthy, has 3, 1 disruption allowed");
    }

    @Test
    void longPodListsAreShortened() {
        List<StuckPod> pods = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            pods.add(new StuckPod("shop", "web-" + i, Cause.DISRUPTION_BUDGET, "shop/web-pdb"));
        }
        assertThat(BlockedByReport.format("w-1", pods, Map.of("shop/web-pdb", WEB), null))
                .startsWith("Node w-1 still has 8 pods").contains("shop/web-4 and 3 more)").doesNotContain("web-5");
    }

    @Test
    void theApiErrorIsCutToItsLast2000Characters() {
        String error = "head-" + "x".repeat(3000) + "-the-end";
        String tail = BlockedByReport.tail(error);
        assertThat(tail).hasSize(2000).endsWith("-the-end").startsWith("…");
        assertThat(BlockedByReport.format("w-1", List.of(), Map.of(), error)).endsWith("-the-end").doesNotContain("head-");
        assertThat(BlockedByReport.tail("short")).isEqualTo("short");
    }
}
