package dev.cks.nodeops.operation;

import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a {@link MaintenanceWindow} is open at an instant, and when it opens or closes next. Pure.
 *
 * <p>Times are wall-clock times in the window's zone, so a window keeps its local hours across daylight
 * saving changes (it is an hour shorter or longer that night). A start or end that does not exist that
 * day (in the gap of a spring-forward change) moves later by the length of the gap (02:30 becomes 03:30);
 * one that exists twice (fall-back) is the first of the two.
 */
public final class WindowSchedule {
    /** How far to look for the next opening: a week holds every weekday once, one more day catches an overnight window. */
    private static final int DAYS_AHEAD = 8;
    private static final DateTimeFormatter LOCAL = DateTimeFormatter.ofPattern("EEE yyyy-MM-dd HH:mm");

    /**
     * Where the window stands at an instant.
     *
     * @param open whether work may start now
     * @param opensAt the next opening after the current one (or after now, when closed)
     * @param closesAt when the open window closes; when closed, when the next one closes
     */
    public record Position(boolean open, Instant opensAt, Instant closesAt, ZoneId zone) {
        /** The next opening as users read it: local time and zone, then UTC. */
        public String describeOpening() {
            return LOCAL.format(opensAt.atZone(zone)) + " " + zone + " (" + opensAt + ")";
        }

        public String describeClosing() {
            return LOCAL.format(closesAt.atZone(zone)) + " " + zone + " (" + closesAt + ")";
        }
    }

    /** A window that cannot be read (a time zone this JVM does not know). */
    public static final class Unreadable extends Exception {
        Unreadable(String message) {
            super(message);
        }
    }

    private WindowSchedule() {
    }

    /** @return empty when the operation has no window: always open */
    public static Optional<Position> at(MaintenanceWindow window, Instant now) throws Unreadable {
        if (window == null) {
            return Optional.empty();
        }
        ZoneId zone;
        try {
            zone = ZoneId.of(window.getTimeZone() == null ? "UTC" : window.getTimeZone());
        } catch (DateTimeException e) {
            throw new Unreadable("window.timeZone '" + window.getTimeZone() + "' is not a time zone this operator knows (" + e.getMessage()
                    + "); nothing new starts until spec.window is fixed.");
        }
        List<Instant[]> spans = spans(window, zone, now);
        Instant[] current = spans.stream().filter(s -> !now.isBefore(s[0]) && now.isBefore(s[1])).findFirst().orElse(null);
        if (current != null) {
            Instant[] next = spans.stream().filter(s -> s[0].isAfter(current[0])).findFirst().orElse(current);
            return Optional.of(new Position(true, next[0], current[1], zone));
        }
        Instant[] next = spans.stream().filter(s -> s[0].isAfter(now)).findFirst()
                .orElseThrow(() -> new IllegalStateException("a window with days has an opening within " + DAYS_AHEAD + " days"));
        return Optional.of(new Position(false, next[0], next[1], zone));
    }

    /** The window's openings from yesterday to a week ahead, merged where one ends as the next begins (every day 00:00-24:00). */
    private static List<Instant[]> spans(MaintenanceWindow window, ZoneId zone, Instant now) {
        LocalTime start = LocalTime.parse(window.getStart());
        boolean endOfDay = "24:00".equals(window.getEnd());
        LocalTime end = endOfDay ? LocalTime.MIDNIGHT : LocalTime.parse(window.getEnd());
        boolean overnight = endOfDay || !end.isAfter(start);
        LocalDate today = now.atZone(zone).toLocalDate();
        List<Instant[]> spans = new ArrayList<>();
        for (int offset = -1; offset <= DAYS_AHEAD; offset++) {
            LocalDate day = today.plusDays(offset);
            if (!window.getDays().contains(dayOf(day.getDayOfWeek()))) {
                continue;
            }
            Instant opens = ZonedDateTime.of(day, start, zone).toInstant();
            Instant closes = ZonedDateTime.of(overnight ? day.plusDays(1) : day, end, zone).toInstant();
            if (!spans.isEmpty() && !opens.isAfter(spans.get(spans.size() - 1)[1])) {
                spans.get(spans.size() - 1)[1] = closes;
            } else {
                spans.add(new Instant[] {opens, closes});
            }
        }
        return spans;
    }

    private static MaintenanceWindow.Day dayOf(DayOfWeek day) {
        return MaintenanceWindow.Day.values()[day.getValue() - 1];
    }
}
