package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PagePlanTest {

    @Test
    void asksForMoreWhileFullPagesHaveNotReachedTheCount() {
        assertThat(PagePlan.hasNextPage(500, 1200, 500, 500)).isTrue();
        assertThat(PagePlan.hasNextPage(500, 1200, 500, 1000)).isTrue();
        assertThat(PagePlan.hasNextPage(500, 1200, 200, 1200)).isFalse();
    }

    @Test
    void stopsWhenAnExactMultipleIsComplete() {
        assertThat(PagePlan.hasNextPage(500, 5000, 500, 5000)).isFalse();
    }

    @Test
    void stopsOnAShortOrEmptyPageEvenIfTheCountWasNotReached() {
        // Resources deleted between two pages leave the total unreachable.
        assertThat(PagePlan.hasNextPage(500, 1200, 499, 999)).isFalse();
        assertThat(PagePlan.hasNextPage(500, 1200, 0, 1000)).isFalse();
    }

    @Test
    void countsTheCallsOfAFullListing() {
        assertThat(PagePlan.callsNeeded(0, 500)).isEqualTo(1);
        assertThat(PagePlan.callsNeeded(1200, 500)).isEqualTo(3);
        assertThat(PagePlan.callsNeeded(5000, 500)).isEqualTo(10);
    }
}
