package dev.cks.nodeops.cloudstack;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * CloudStack's clock as measured from its answers, never assumed equal to ours. CloudStack judges a
 * request's {@code expires} by its own clock (ApiServer.verifyRequest) and stamps a job's {@code created}
 * with it, so a skewed management server makes a signature expire early or late and hides a job from a
 * search by our clock. Every HTTP answer carries a {@code Date} header (RFC 9110 §6.6.1: an origin server
 * with a clock sends it; Jetty, CloudStack's server, does): CloudStack's time when it answered, to the second.
 *
 * <p>The offset is the latest sample: {@code Date} + ½ s (it is truncated to the second) minus the middle
 * of our request's round trip. Its error is at most ½ s plus half the round trip, which {@link #TOLERANCE}
 * covers for any answer that came within a few seconds. Thread-safe; one per process.
 */
public final class CloudStackClock {
    /** What one sample may be off by, and how much earlier than our request, by CloudStack's clock, a job of it may be stamped. */
    public static final Duration TOLERANCE = Duration.ofSeconds(5);
    /** Past this, the skew is named in what the operator reports: CloudStack's times no longer read like ours. */
    public static final Duration NOTABLE = Duration.ofSeconds(60);

    /** One measurement: CloudStack's clock minus ours, and when (by our clock) it was taken. */
    public record Offset(Duration value, Instant measuredAt) {
        static final Offset UNMEASURED = new Offset(Duration.ZERO, null);
    }

    private final AtomicReference<Offset> offset = new AtomicReference<>(Offset.UNMEASURED);

    /**
     * One answer's {@code Date} header, with when our request left and its answer arrived (our clock).
     * A missing or unreadable header changes nothing.
     */
    public void observe(String dateHeader, Instant sentAt, Instant receivedAt) {
        parseHttpDate(dateHeader).ifPresent(date -> {
            Instant middle = sentAt.plus(Duration.between(sentAt, receivedAt).dividedBy(2));
            offset.set(new Offset(Duration.between(middle, date.plusMillis(500)), receivedAt));
        });
    }

    /** CloudStack's clock minus ours; zero until an answer was measured. */
    public Duration offset() {
        return offset.get().value();
    }

    public boolean measured() {
        return offset.get().measuredAt() != null;
    }

    /** An instant of our clock as CloudStack's clock reads at that moment. */
    public Instant toCloudStack(Instant ours) {
        return ours.plus(offset());
    }

    /** An instant read from CloudStack (a job's {@code created}) as our clock read at that moment. */
    public Instant toOurs(Instant cloudStacks) {
        return cloudStacks.minus(offset());
    }

    /**
     * "CloudStack's clock runs 11 min 3 s ahead of this operator's", when the skew is {@link #NOTABLE};
     * empty otherwise.
     */
    public Optional<String> skew() {
        Duration value = offset();
        if (value.abs().compareTo(NOTABLE) < 0) {
            return Optional.empty();
        }
        return Optional.of("CloudStack's clock runs " + describe(value.abs()) + (value.isNegative() ? " behind" : " ahead of") + " this operator's");
    }

    private static String describe(Duration duration) {
        long minutes = duration.toMinutes();
        long seconds = duration.minusMinutes(minutes).getSeconds();
        return minutes == 0 ? seconds + " s" : minutes + " min " + seconds + " s";
    }

    static Optional<Instant> parseHttpDate(String header) {
        if (header == null || header.isBlank()) {
            return Optional.empty();
        }
        try {
            return Optional.of(ZonedDateTime.parse(header.strip(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
        } catch (DateTimeParseException unreadable) {
            return Optional.empty();
        }
    }
}
