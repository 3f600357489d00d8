package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

class CloudStackClockTest {
    private static final Instant SENT = Instant.parse("2026-12-02T12:00:00.200Z");

    @Test
    void unmeasuredItIsOurs() {
        CloudStackClock clock = new CloudStackClock();
        assertThat(clock.measured()).isFalse();
        assertThat(clock.offset()).isZero();
        assertThat(clock.toCloudStack(SENT)).isEqualTo(SENT);
        assertThat(clock.skew()).isEmpty();
    }

    @Test
    void cloudStacksNowAgainstTheMiddleOfTheSpanItWasReadInIsTheOffset() {
        CloudStackClock clock = new CloudStackClock();
        // CloudStack 11 min ahead: its now, read between SENT and SENT + 0.4 s, was 12:11:00.4.
        clock.observe(Instant.parse("2026-12-02T12:11:00.400Z"), SENT, SENT.plusMillis(400));
        assertThat(clock.measured()).isTrue();
        assertThat(clock.offset()).isBetween(Duration.ofMinutes(11).minusSeconds(1), Duration.ofMinutes(11).plusSeconds(1));
        assertThat(clock.toOurs(clock.toCloudStack(SENT))).isEqualTo(SENT);
        assertThat(clock.skew()).hasValueSatisfying(text -> assertThat(text).startsWith("CloudStack's clock runs 11 min").contains("ahead of this operator's"));

        clock.observe(Instant.parse("2026-12-02T11:57:00.400Z"), SENT, SENT.plusMillis(400));
        assertThat(clock.offset()).isBetween(Duration.ofMinutes(-3).minusSeconds(1), Duration.ofMinutes(-3).plusSeconds(1));
        assertThat(clock.skew()).hasValueSatisfying(text -> assertThat(text).contains("behind this operator's"));
    }

    @Test
    void aSkewBelowAMinuteIsNotNamed() {
        CloudStackClock clock = new CloudStackClock();
        clock.observe(SENT.plusSeconds(30), SENT, SENT);
        assertThat(clock.offset()).isEqualTo(Duration.ofSeconds(30));
        assertThat(clock.measuredAt()).isEqualTo(SENT);
        assertThat(clock.skew()).isEmpty();
    }
}
