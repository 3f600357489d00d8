package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

class JobWaitTest {
    private static final Instant ASKED = Instant.parse("2026-12-01T03:00:00Z");

    @Test
    void aJobIsLookedAtEveryTwoSecondsAtFirstThenATenthOfItsAgeAtMostOnceAMinute() {
        assertThat(JobWait.pollInterval(ASKED, ASKED.plusSeconds(5))).isEqualTo(Duration.ofSeconds(2));
        assertThat(JobWait.pollInterval(ASKED, ASKED.plusSeconds(300))).isEqualTo(Duration.ofSeconds(30));
        assertThat(JobWait.pollInterval(ASKED, ASKED.plus(Duration.ofHours(3)))).isEqualTo(Duration.ofMinutes(1));
        assertThat(JobWait.pollInterval(null, ASKED)).as("asked at an unknown time: soon").isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void aJobPendingForMoreThanAnHourIsSaidToBeAndWhereToLook() {
        assertThat(JobWait.pending("Waiting for CloudStack job j-1 (attachIso)", "j-1", ASKED, ASKED.plus(Duration.ofMinutes(59))))
                .isEqualTo("Waiting for CloudStack job j-1 (attachIso).");
        assertThat(JobWait.pending("Waiting for CloudStack job j-1 (attachIso)", "j-1", ASKED, ASKED.plus(Duration.ofMinutes(75))))
                .startsWith("Waiting for CloudStack job j-1 (attachIso), pending for 75 min: check the job in CloudStack (queryAsyncJobResult j-1)")
                .endsWith("Nothing is assumed until it ends.");
    }
}
