package dev.cks.nodeops.cloudstack;

import java.time.Duration;

/**
 * Tuning of the CloudStack client. Everything has a default; use the {@code with…} methods to
 * change one value.
 *
 * @param signatureLifetime when positive, requests carry {@code signatureVersion=3} and an
 *        {@code expires} this far ahead, so a captured URL stops working; zero sends plain
 *        signatures (for servers older than 4.1 or with a badly skewed clock).
 * @param expiryMargin added to the signature lifetime for how long after a write's recorded request time
 *        CloudStack may still take it ({@link #unansweredWriteWindow}): the request is signed a moment after
 *        that time (the status write before it, retries of a request that never left), and CloudStack's clock
 *        may run behind ours.
 */
public record CloudStackClientSettings(
        Duration connectTimeout,
        Duration readTimeout,
        Duration callTimeout,
        Duration asyncJobTimeout,
        Duration asyncJobInitialPollInterval,
        Duration asyncJobMaxPollInterval,
        int pageSize,
        Duration signatureLifetime,
        Duration expiryMargin,
        RetryPolicy readRetry,
        RetryPolicy unsentWriteRetry) {

    /** CloudStack caps pagesize at the global setting default.page.size (500 out of the box). */
    public static final int MAX_PAGE_SIZE = 500;

    public static final CloudStackClientSettings DEFAULTS = new CloudStackClientSettings(
            Duration.ofSeconds(10),
            Duration.ofSeconds(60),
            Duration.ofSeconds(90),
            Duration.ofMinutes(30),
            Duration.ofSeconds(2),
            Duration.ofSeconds(15),
            MAX_PAGE_SIZE,
            // Ten minutes leave room for a slow proxy or a queued request, and keep the wait before a lost write is
            // sent again (lifetime + margin) short.
            Duration.ofMinutes(10),
            Duration.ofSeconds(90),
            RetryPolicy.DEFAULT,
            new RetryPolicy(3, Duration.ofMillis(500), Duration.ofSeconds(2), Duration.ofSeconds(10)));

    public CloudStackClientSettings {
        if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
            throw new IllegalArgumentException("pageSize must be between 1 and " + MAX_PAGE_SIZE + ", was " + pageSize);
        }
        if (signatureLifetime == null || signatureLifetime.isNegative() || expiryMargin == null || expiryMargin.isNegative()) {
            throw new IllegalArgumentException("the signature lifetime and its expiry margin must be zero or more, were "
                    + signatureLifetime + " and " + expiryMargin);
        }
    }

    public CloudStackClientSettings withTimeouts(Duration connect, Duration read, Duration call) {
        return new CloudStackClientSettings(connect, read, call, asyncJobTimeout, asyncJobInitialPollInterval,
                asyncJobMaxPollInterval, pageSize, signatureLifetime, expiryMargin, readRetry, unsentWriteRetry);
    }

    public CloudStackClientSettings withAsyncJobWait(Duration timeout, Duration initialPoll, Duration maxPoll) {
        return new CloudStackClientSettings(connectTimeout, readTimeout, callTimeout, timeout, initialPoll, maxPoll,
                pageSize, signatureLifetime, expiryMargin, readRetry, unsentWriteRetry);
    }

    public CloudStackClientSettings withPageSize(int size) {
        return new CloudStackClientSettings(connectTimeout, readTimeout, callTimeout, asyncJobTimeout,
                asyncJobInitialPollInterval, asyncJobMaxPollInterval, size, signatureLifetime, expiryMargin, readRetry,
                unsentWriteRetry);
    }

    public CloudStackClientSettings withSignatureLifetime(Duration lifetime) {
        return withSignatureLifetime(lifetime, expiryMargin);
    }

    public CloudStackClientSettings withSignatureLifetime(Duration lifetime, Duration margin) {
        return new CloudStackClientSettings(connectTimeout, readTimeout, callTimeout, asyncJobTimeout,
                asyncJobInitialPollInterval, asyncJobMaxPollInterval, pageSize, lifetime, margin, readRetry, unsentWriteRetry);
    }

    public CloudStackClientSettings withRetries(RetryPolicy reads, RetryPolicy unsentWrites) {
        return new CloudStackClientSettings(connectTimeout, readTimeout, callTimeout, asyncJobTimeout,
                asyncJobInitialPollInterval, asyncJobMaxPollInterval, pageSize, signatureLifetime, expiryMargin, reads, unsentWrites);
    }

    /**
     * How long after a write's recorded request time CloudStack may still take it: a signed request is refused
     * once its {@code expires} (signed {@link #signatureLifetime} ahead) passed, plus the {@link #expiryMargin};
     * without expiring signatures, as long as the longest a request can wait in front of a server.
     */
    public Duration unansweredWriteWindow() {
        return signsWithExpiry() ? signatureLifetime.plus(expiryMargin) : Duration.ofMinutes(15);
    }

    public boolean signsWithExpiry() {
        return !signatureLifetime.isZero();
    }
}
