package dev.cks.nodeops.cloudstack;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * CloudStack's clock as measured, never assumed equal to ours. CloudStack judges a request's {@code expires}
 * by its own clock (ApiServer.verifyRequest, against System.currentTimeMillis) and stamps a job's
 * {@code created} with it, so a skewed management server makes a signature expire early or late and hides
 * a job from a search by our clock. Its HTTP answers carry no {@code Date} header (ServerDaemon turns
 * Jetty's off; a proxy's would be the proxy's clock), so the client measures it the way CloudStack applies
 * it: which {@code expires} it still takes ({@link CloudStackClient#measureClock}).
 *
 * <p>Until measured, the offset is taken as zero and jobs are searched from {@link #UNMEASURED_LOOKBACK}
 * before the request, which only makes more running jobs candidates (a running job that may be ours is
 * waited for, never taken over blindly). Thread-safe; one per process.
 */
public final class CloudStackClock {
    /** What one measurement may be off by, and how much earlier than our request, by CloudStack's clock, a job of it may be stamped. */
    public static final Duration TOLERANCE = Duration.ofSeconds(5);
    /** How far back jobs are searched while CloudStack's clock is unmeasured: more than a clock left without NTP drifts in weeks. */
    public static final Duration UNMEASURED_LOOKBACK = Duration.ofMinutes(15);
    /** Past this, the skew is named in what the operator reports: CloudStack's times no longer read like ours. */
    public static final Duration NOTABLE = Duration.ofSeconds(60);

    /** One measurement: CloudStack's clock minus ours, and when (by our clock) it was taken. */
    public record Offset(Duration value, Instant measuredAt) {
        static final Offset UNMEASURED = new Offset(Duration.ZERO, null);
    }

    private final AtomicReference<Offset> offset = new AtomicReference<>(Offset.UNMEASURED);

    /**
     * CloudStack's clock read as {@code cloudStacksNow} somewhere between {@code from} and {@code to} (our clock):
     * the offset is taken against the middle of that span.
     */
    public void observe(Instant cloudStacksNow, Instant from, Instant to) {
        Instant middle = from.plus(Duration.between(from, to).dividedBy(2));
        offset.set(new Offset(Duration.between(middle, cloudStacksNow), to));
    }

    /** When (by our clock) it was last measured; null before that. */
    public Instant measuredAt() {
        return offset.get().measuredAt();
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

}
