package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

class LeaseDeadlineTest {
    private static final Instant T0 = Instant.parse("2026-11-30T21:30:00Z");
    private final LeaseDeadline deadline = new LeaseDeadline("operator-a", Duration.ofSeconds(10));

    @Test
    void aReplicaThatDoesNotLeadHasNothingToLose() {
        deadline.read("operator-b", T0);
        assertThat(deadline.lost(T0.plusSeconds(3600))).isEmpty();
    }

    @Test
    void eachRenewalSeenMovesTheDeadlineAndNoAnswerDoesNot() {
        deadline.startedLeading(T0);
        assertThat(deadline.lost(T0.plusSeconds(10))).isEmpty();
        deadline.read("operator-a", T0.plusSeconds(2));
        assertThat(deadline.lost(T0.plusSeconds(12))).isEmpty();
        // The API server stops answering: no read arrives, however long a call hangs.
        assertThat(deadline.lost(T0.plusMillis(12_001))).hasValueSatisfying(why -> assertThat(why).contains("not renewed since 2026-11-30T21:30:02Z"));
    }

    @Test
    void anOlderRenewalReadLateNeverMovesTheDeadlineBack() {
        deadline.startedLeading(T0.plusSeconds(5));
        deadline.read("operator-a", T0);
        assertThat(deadline.lost(T0.plusSeconds(14))).isEmpty();
    }

    @Test
    void anotherHolderEndsItAtOnceAndOurOwnReleaseDoesNot() {
        deadline.startedLeading(T0);
        deadline.read("", T0);
        assertThat(deadline.lost(T0.plusSeconds(1))).isEmpty();
        deadline.read("operator-b", T0.plusSeconds(1));
        assertThat(deadline.lost(T0.plusSeconds(1))).contains("the Lease is held by operator-b");
    }
}
