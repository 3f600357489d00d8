package dev.cks.nodeops.operation;

import static dev.cks.nodeops.testing.TestWindows.window;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.operation.MaintenanceWindow.Day;

class WindowScheduleTest {
    private static WindowSchedule.Position at(MaintenanceWindow window, String instant) throws WindowSchedule.Unreadable {
        return WindowSchedule.at(window, Instant.parse(instant)).orElseThrow();
    }

    @Test
    void noWindowMeansAlwaysOpen() throws Exception {
        assertThat(WindowSchedule.at(null, Instant.parse("2026-11-30T12:00:00Z"))).isEmpty();
    }

    @Test
    void closedUntilTheNextDayInTheListAndOpenUntilItsEnd() throws Exception {
        MaintenanceWindow weekend = window("UTC", "01:00", "05:00", Day.Sat, Day.Sun);
        // Monday 2026-11-30.
        WindowSchedule.Position monday = at(weekend, "2026-11-30T12:00:00Z");
        assertThat(monday.open()).isFalse();
        assertThat(monday.opensAt()).isEqualTo(Instant.parse("2026-12-05T01:00:00Z"));
        assertThat(monday.closesAt()).isEqualTo(Instant.parse("2026-12-05T05:00:00Z"));

        WindowSchedule.Position saturday = at(weekend, "2026-12-05T04:59:59Z");
        assertThat(saturday.open()).isTrue();
        assertThat(saturday.closesAt()).isEqualTo(Instant.parse("2026-12-05T05:00:00Z"));
        assertThat(saturday.opensAt()).as("the next one after this").isEqualTo(Instant.parse("2026-12-06T01:00:00Z"));
        assertThat(at(weekend, "2026-12-05T05:00:00Z").open()).as("the end is exclusive").isFalse();
        assertThat(at(weekend, "2026-12-05T01:00:00Z").open()).as("the start is inclusive").isTrue();
    }

    @Test
    void anOvernightWindowBelongsToTheDayItStarts() throws Exception {
        MaintenanceWindow friday = window("UTC", "22:00", "04:00", Day.Fri);
        assertThat(at(friday, "2026-12-05T03:00:00Z").open()).as("Saturday 03:00 is Friday's night").isTrue();
        assertThat(at(friday, "2026-12-05T03:00:00Z").closesAt()).isEqualTo(Instant.parse("2026-12-05T04:00:00Z"));
        assertThat(at(friday, "2026-12-05T23:00:00Z").open()).as("Saturday night is not in the list").isFalse();
        assertThat(at(friday, "2026-12-05T23:00:00Z").opensAt()).isEqualTo(Instant.parse("2026-12-11T22:00:00Z"));
    }

    @Test
    void wholeDaysBackToBackMergeIntoOneOpening() throws Exception {
        MaintenanceWindow weekend = window("UTC", "00:00", "24:00", Day.Sat, Day.Sun);
        WindowSchedule.Position position = at(weekend, "2026-12-05T23:00:00Z");
        assertThat(position.open()).isTrue();
        assertThat(position.closesAt()).as("Saturday and Sunday are one stretch").isEqualTo(Instant.parse("2026-12-07T00:00:00Z"));
        assertThat(position.opensAt()).isEqualTo(Instant.parse("2026-12-12T00:00:00Z"));
    }

    @Test
    void localHoursFollowTheZoneAcrossTheSpringForwardChange() throws Exception {
        // Europe/Berlin: on Sunday 2026-03-29 clocks jump from 02:00 CET to 03:00 CEST.
        MaintenanceWindow sunday = window("Europe/Berlin", "01:00", "05:00", Day.Sun);
        WindowSchedule.Position before = at(sunday, "2026-03-28T12:00:00Z");
        assertThat(before.opensAt()).as("01:00 CET").isEqualTo(Instant.parse("2026-03-29T00:00:00Z"));
        assertThat(before.closesAt()).as("05:00 CEST").isEqualTo(Instant.parse("2026-03-29T03:00:00Z"));
        assertThat(Duration.between(before.opensAt(), before.closesAt())).as("an hour shorter that night").isEqualTo(Duration.ofHours(3));
        assertThat(before.describeOpening()).isEqualTo("Sun 2026-03-29 01:00 Europe/Berlin (2026-03-29T00:00:00Z)");

        MaintenanceWindow inTheGap = window("Europe/Berlin", "02:30", "04:00", Day.Sun);
        assertThat(at(inTheGap, "2026-03-28T12:00:00Z").opensAt()).as("02:30 does not exist that night: 03:30 CEST")
                .isEqualTo(Instant.parse("2026-03-29T01:30:00Z"));
        assertThat(at(inTheGap, "2026-04-04T12:00:00Z").opensAt()).as("the week after, 02:30 CEST")
                .isEqualTo(Instant.parse("2026-04-05T00:30:00Z"));
    }

    @Test
    void localHoursFollowTheZoneAcrossTheFallBackChange() throws Exception {
        // Europe/Berlin: on Sunday 2026-10-25 clocks go back from 03:00 CEST to 02:00 CET.
        MaintenanceWindow sunday = window("Europe/Berlin", "01:00", "05:00", Day.Sun);
        WindowSchedule.Position position = at(sunday, "2026-10-25T00:30:00Z");
        assertThat(position.open()).as("02:30 CEST, in the window").isTrue();
        assertThat(position.closesAt()).as("05:00 CET").isEqualTo(Instant.parse("2026-10-25T04:00:00Z"));
        assertThat(Duration.between(Instant.parse("2026-10-24T23:00:00Z"), position.closesAt())).as("an hour longer that night")
                .isEqualTo(Duration.ofHours(5));

        MaintenanceWindow twice = window("Europe/Berlin", "02:30", "04:00", Day.Sun);
        assertThat(at(twice, "2026-10-24T12:00:00Z").opensAt()).as("02:30 happens twice: the first, CEST")
                .isEqualTo(Instant.parse("2026-10-25T00:30:00Z"));
    }

    @Test
    void theDayIsTheZonesDayNotUtcs() throws Exception {
        // 23:30 UTC on Friday is already Saturday 08:30 in Tokyo.
        MaintenanceWindow saturday = window("Asia/Tokyo", "08:00", "09:00", Day.Sat);
        assertThat(at(saturday, "2026-12-04T23:30:00Z").open()).isTrue();
        assertThat(at(window("UTC", "08:00", "09:00", Day.Sat), "2026-12-04T23:30:00Z").open()).isFalse();
    }

    @Test
    void aZoneThisJvmDoesNotKnowIsUnreadable() {
        assertThatThrownBy(() -> WindowSchedule.at(window("Mars/Olympus_Mons", "01:00", "05:00", Day.Sat), Instant.parse("2026-12-04T23:30:00Z")))
                .isInstanceOf(WindowSchedule.Unreadable.class).hasMessageContaining("window.timeZone 'Mars/Olympus_Mons'");
    }
}
