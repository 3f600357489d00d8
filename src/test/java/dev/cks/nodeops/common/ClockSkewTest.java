package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

class ClockSkewTest {
    private static final Instant SERVER = Instant.parse("2026-12-03T02:00:00Z");
    private static final Duration LEASE = Duration.ofSeconds(150);
    private static final Duration RENEW = Duration.ofSeconds(120);

    @Test
    void theBoundIsAThirdOfTheMarginBetweenTheLeaseAndTheRenewDeadline() {
        assertThat(ClockSkew.tolerated(LEASE, RENEW)).isEqualTo(Duration.ofSeconds(10));
        assertThat(ClockSkew.tolerated(Duration.ofSeconds(30), Duration.ofSeconds(20))).isEqualTo(Duration.ofSeconds(10).dividedBy(3));
    }

    @Test
    void aClock45SecondsAheadIsRefusedNamingTheSkewAndWhatToDo() {
        ClockSkew skew = ClockSkew.measure(SERVER.plusMillis(45_300), SERVER.plusMillis(45_400), SERVER);

        assertThat(skew.refusal(Duration.ofSeconds(10), LEASE, RENEW)).hasValueSatisfying(why -> assertThat(why)
                .contains("clock is 45 s ahead of the API server's").contains("at most 10 s").contains("NTP"));
    }

    @Test
    void aClockBehindIsRefusedToo() {
        ClockSkew skew = ClockSkew.measure(SERVER.minusSeconds(30), SERVER.minusMillis(29_900), SERVER);

        assertThat(skew.refusal(Duration.ofSeconds(10), LEASE, RENEW)).hasValueSatisfying(why -> assertThat(why).contains("30 s behind"));
    }

    @Test
    void onlyAnOffsetSurelyBeyondTheBoundIsRefused() {
        // The Date header says 02:00:00: the server's clock read anything up to 02:00:00.999 as it answered.
        assertThat(ClockSkew.measure(SERVER.plusMillis(10_900), SERVER.plusMillis(11_000), SERVER).refusal(Duration.ofSeconds(10), LEASE, RENEW))
                .as("10.9 s after 02:00:00 may be 9.9 s after 02:00:00.999").isEmpty();
        assertThat(ClockSkew.measure(SERVER.plusMillis(11_100), SERVER.plusMillis(11_200), SERVER).refusal(Duration.ofSeconds(10), LEASE, RENEW))
                .isPresent();
        // A slow answer widens what is known: a request that took 5 s cannot prove a 6 s offset beyond a 3 s bound.
        assertThat(ClockSkew.measure(SERVER.minusSeconds(2), SERVER.plusSeconds(3), SERVER).refusal(Duration.ofSeconds(3), LEASE, RENEW)).isEmpty();
    }

    @Test
    void aSynchronisedClockPasses() {
        assertThat(ClockSkew.measure(SERVER.plusMillis(400), SERVER.plusMillis(450), SERVER).refusal(Duration.ofSeconds(3), LEASE, RENEW)).isEmpty();
    }
}
