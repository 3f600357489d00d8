package dev.cks.nodeops.common;

import java.time.Duration;
import java.util.Arrays;

import io.micrometer.core.instrument.Timer;

/**
 * Every timer of the operator, by the scale of what it times: exported as a Prometheus histogram
 * (`_bucket{le=…}` series) so that quantiles and objectives can be computed across replicas and over any
 * range (`histogram_quantile`), which a summary's count and sum cannot give. The bounds are explicit rather
 * than Micrometer's percentile histogram, which puts some 70 buckets between the same minimum and maximum:
 * a dozen per series keeps the series per timer small, and each bound is a time a person would ask about.
 */
public enum DurationHistogram {
    /** A CloudStack API request, its retries included: tens of milliseconds to a couple of minutes. */
    API_REQUEST(millis(50), millis(100), millis(250), millis(500), seconds(1), seconds(2), seconds(5), seconds(10), seconds(30), seconds(60),
            seconds(120)),
    /** A CloudStack async job from submission to its end: seconds (attach an ISO) to an hour (scale a cluster). */
    ASYNC_JOB(seconds(1), seconds(5), seconds(15), seconds(30), seconds(60), seconds(120), seconds(300), seconds(600), seconds(1200),
            seconds(1800), seconds(3600)),
    /** A step of one node (drain, upgrade Job, Ready wait) or a whole node: seconds to hours. */
    NODE_STEP(seconds(5), seconds(15), seconds(30), seconds(60), seconds(120), seconds(300), seconds(600), seconds(1200), seconds(1800),
            seconds(3600), seconds(7200), seconds(14400)),
    /** One VM-map audit run: under a second to minutes (a few CloudStack lists and the Node list). */
    AUDIT_RUN(millis(100), millis(250), millis(500), seconds(1), seconds(2), seconds(5), seconds(10), seconds(30), seconds(60), seconds(120));

    private final Duration[] bounds;

    DurationHistogram(Duration... bounds) {
        this.bounds = bounds;
    }

    /** A timer of this scale; its name, tags and description are the caller's. */
    public Timer.Builder timer(String name) {
        return Timer.builder(name).serviceLevelObjectives(bounds);
    }

    /** The upper bounds of its buckets, smallest first (Prometheus adds +Inf). */
    public Duration[] bounds() {
        return Arrays.copyOf(bounds, bounds.length);
    }

    private static Duration millis(long millis) {
        return Duration.ofMillis(millis);
    }

    private static Duration seconds(long seconds) {
        return Duration.ofSeconds(seconds);
    }
}
