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
    void aJobsCreatedAgainstTheMiddleOfTheRoundTripThatQueuedItGivesTheOffsetWithinASecond() {
        CloudStackClock clock = new CloudStackClock();
        // CloudStack 11 min ahead: it queued the job at 12:11:00.4 and wrote the second, 12:11:00.
        clock.observeJob("2026-12-02T12:11:00+0000", SENT, SENT.plusMillis(400));
        assertThat(clock.measured()).isTrue();
        assertThat(clock.offset()).isBetween(Duration.ofMinutes(11).minusSeconds(1), Duration.ofMinutes(11).plusSeconds(1));
        assertThat(clock.toOurs(clock.toCloudStack(SENT))).isEqualTo(SENT);
        assertThat(clock.skew()).hasValueSatisfying(text -> assertThat(text).startsWith("CloudStack's clock runs 11 min").contains("ahead of this operator's"));

        clock.observeJob("2026-12-02T11:57:00+0000", SENT, SENT.plusMillis(400));
        assertThat(clock.offset()).isBetween(Duration.ofMinutes(-3).minusSeconds(1), Duration.ofMinutes(-3).plusSeconds(1));
        assertThat(clock.skew()).hasValueSatisfying(text -> assertThat(text).contains("behind this operator's"));
    }

    @Test
    void aSkewBelowAMinuteIsNotNamedAndAnUnreadableTimeChangesNothing() {
        CloudStackClock clock = new CloudStackClock();
        clock.observeJob("2026-12-02T12:00:30+0000", SENT, SENT);
        assertThat(clock.skew()).isEmpty();
        Duration before = clock.offset();
        clock.observeJob("yesterday", SENT, SENT);
        clock.observeJob(null, SENT, SENT);
        assertThat(clock.offset()).isEqualTo(before);
    }
}
