package dev.cks.nodeops.cloudstack;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.cks.nodeops.common.DurationHistogram;

/**
 * {@code cks.cloudstack.api.requests{command,outcome}} (Prometheus: the histogram
 * {@code cks_cloudstack_api_requests_seconds}), {@code cks.cloudstack.api.retries{command}} and
 * {@code cks.cloudstack.api.errors{command,errorcode}} and {@code cks.cloudstack.api.jobs{command,outcome}}
 * (time from submitting an async command to the end of its job). Tags never carry parameters, so no key can leak.
 */
public final class CloudStackApiMetrics {

    public static final String REQUESTS = "cks.cloudstack.api.requests";
    public static final String RETRIES = "cks.cloudstack.api.retries";
    public static final String ERRORS = "cks.cloudstack.api.errors";
    public static final String JOBS = "cks.cloudstack.api.jobs";
    public static final String CREDENTIALS_REJECTED = "cks.cloudstack.api.credentials.rejected";
    public static final String CLOCK_OFFSET = "cks.cloudstack.clock.offset";

    public static final String SUCCESS = "success";

    private final MeterRegistry registry;

    /**
     * 1 from a request CloudStack refused as unauthenticated (errorcode 401: wrong keys, or a clock too far
     * off for the signature) until a request succeeds.
     */
    private final AtomicInteger credentialsRejected = new AtomicInteger();

    /** CloudStack's clock as its answers show it: per process like these metrics, so a client built after a key rotation keeps it. */
    private final CloudStackClock cloudStackClock = new CloudStackClock();

    /**
     * One per registry and process, shared by the clients built one after the other as the keys' Secret
     * changes: a registry keeps the first gauge of a name, so a second instance's state would not be exported.
     */
    public CloudStackApiMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder(CREDENTIALS_REJECTED, credentialsRejected, AtomicInteger::get)
                .description("1 while CloudStack rejects the operator's API keys (errorcode 401)").strongReference(true).register(registry);
        Gauge.builder(CLOCK_OFFSET, cloudStackClock, clock -> clock.offset().toMillis() / 1000.0).baseUnit("seconds")
                .description("CloudStack's clock minus the operator's, as last measured by which signature expiry it takes").strongReference(true)
                .register(registry);
    }

    public CloudStackClock cloudStackClock() {
        return cloudStackClock;
    }

    public void recordRequest(String command, String outcome, Duration duration) {
        DurationHistogram.API_REQUEST.timer(REQUESTS)
                .description("Time of CloudStack API commands, retries included")
                .tag("command", command)
                .tag("outcome", outcome)
                .register(registry)
                .record(duration);
        if (SUCCESS.equals(outcome)) {
            credentialsRejected.set(0);
        }
    }

    public void recordJob(String command, String outcome, Duration duration) {
        DurationHistogram.ASYNC_JOB.timer(JOBS)
                .description("Time from submitting an async CloudStack command until its job ended or the wait gave up")
                .tag("command", command)
                .tag("outcome", outcome)
                .register(registry)
                .record(duration);
    }

    public void recordRetry(String command) {
        Counter.builder(RETRIES).description("CloudStack API requests sent again after a failure")
                .tag("command", command).register(registry).increment();
    }

    public void recordError(String command, Integer errorCode) {
        Counter.builder(ERRORS).description("CloudStack API errors by CloudStack errorcode")
                .tag("command", command)
                .tag("errorcode", errorCode == null ? "none" : errorCode.toString())
                .register(registry).increment();
        if (errorCode != null && errorCode == CloudStackException.UNAUTHORIZED) {
            credentialsRejected.set(1);
        }
    }

    /** The outcome tag of a failure: its kind, in lower case. */
    public static String outcomeOf(CloudStackException failure) {
        return failure.kind().name().toLowerCase(java.util.Locale.ROOT);
    }
}
