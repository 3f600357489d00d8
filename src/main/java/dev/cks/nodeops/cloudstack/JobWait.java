package dev.cks.nodeops.cloudstack;

import java.time.Duration;
import java.time.Instant;

/**
 * Waiting for a CloudStack async job that is still running: how often it is looked at (every 2 s at
 * first, less often the longer it runs: a tenth of its age, at most once a minute) and what is said
 * about one that runs long. A running job is never assumed done or failed, however long it takes.
 */
public final class JobWait {
    public static final Duration FIRST_POLL = Duration.ofSeconds(2);
    static final Duration MAX_POLL = Duration.ofMinutes(1);
    /** CloudStack cancels a job blocking others after job.cancel.threshold.minutes (60 by default): past this, say so. */
    static final Duration SLOW = Duration.ofMinutes(60);

    private JobWait() {
    }

    /** When to look at a job again that was asked for at {@code since} (null: unknown, look soon). */
    public static Duration pollInterval(Instant since, Instant now) {
        Duration tenth = since == null ? FIRST_POLL : Duration.between(since, now).dividedBy(10);
        return tenth.compareTo(FIRST_POLL) < 0 ? FIRST_POLL : tenth.compareTo(MAX_POLL) > 0 ? MAX_POLL : tenth;
    }

    /**
     * {@code waiting} (a sentence without its full stop, naming the job) completed; past an hour it says
     * how long the job has been pending and where to look.
     */
    public static String pending(String waiting, String jobId, Instant since, Instant now) {
        Duration pending = since == null ? Duration.ZERO : Duration.between(since, now);
        return pending.compareTo(SLOW) < 0 ? waiting + "."
                : waiting + ", pending for " + pending.toMinutes() + " min: check the job in CloudStack (queryAsyncJobResult " + jobId
                        + "); CloudStack cancels jobs that block others after job.cancel.threshold.minutes. Nothing is assumed until it ends.";
    }
}
