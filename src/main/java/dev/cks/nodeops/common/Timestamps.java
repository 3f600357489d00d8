package dev.cks.nodeops.common;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** RFC 3339 timestamps as Kubernetes writes them (second precision, UTC). */
public final class Timestamps {
    private Timestamps() {
    }

    public static String format(Instant instant) {
        return instant == null ? null : DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    /** To the next whole second: a wait written with second precision then never ends early. */
    public static Instant roundUp(Instant instant) {
        Instant seconds = instant.truncatedTo(ChronoUnit.SECONDS);
        return seconds.equals(instant) ? instant : seconds.plusSeconds(1);
    }

    public static Instant parse(String text) {
        return text == null || text.isBlank() ? null : Instant.parse(text);
    }
}
