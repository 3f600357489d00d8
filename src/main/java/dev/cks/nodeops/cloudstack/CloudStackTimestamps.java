package dev.cks.nodeops.cloudstack;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/** CloudStack writes times as {@code 2022-04-18T06:21:58+0000} (no colon in the offset), not ISO-8601. */
public final class CloudStackTimestamps {

    public static final DateTimeFormatter FORMAT = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ssZ");

    private CloudStackTimestamps() {
    }

    public static Optional<Instant> parse(String text) {
        if (text == null || text.isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(OffsetDateTime.parse(text, FORMAT).toInstant());
        } catch (DateTimeParseException notCloudStackStyle) {
            try {
                return Optional.of(OffsetDateTime.parse(text).toInstant());
            } catch (DateTimeParseException unknown) {
                return Optional.empty();
            }
        }
    }

    public static String format(Instant instant) {
        return FORMAT.format(instant.atOffset(ZoneOffset.UTC));
    }
}
