package dev.cks.nodeops.cloudstack;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * What became of a write whose answer never arrived ({@link WriteFailure#UNKNOWN}, or an operator that
 * stopped between sending it and recording its job), decided from what CloudStack shows, never
 * assumed: first whether what the write was for is true (the VMs gone, the ISO attached), then the
 * key's jobs of that command since the request, and only when neither shows anything, time. A request
 * that left no trace and that CloudStack can no longer take (its signature has expired:
 * ApiServer.verifyRequest refuses a request past its {@code expires}) never arrived, and may be sent again.
 */
public final class LostAnswer {
    /** How far CloudStack's clock (a job's {@code created}) may be behind ours. */
    public static final Duration CLOCK_SKEW = Duration.ofMinutes(2);

    public sealed interface Verdict {
    }

    /** What the write was for is true (done by this request or otherwise). */
    public record Done() implements Verdict {
    }

    /** A job of the command, started since the request, still runs: it is ours; poll it. */
    public record Running(String jobId) implements Verdict {
    }

    /** A job of the command since the request failed and what it was for is not true. */
    public record Failed(AsyncJobResult job) implements Verdict {
    }

    /** No trace yet, but the request could still reach CloudStack until {@code until}: look again then. */
    public record NotYet(Instant until) implements Verdict {
    }

    /** No trace, and the request can no longer be taken: it never arrived; send it again. */
    public record NeverArrived() implements Verdict {
    }

    private static final Comparator<AsyncJobResult> BY_CREATION =
            Comparator.comparing(job -> CloudStackTimestamps.parse(job.created()).orElse(Instant.EPOCH));

    private LostAnswer() {
    }

    /** The earliest {@code created} of a job that may be the request's, for {@link CloudStackClient#listAsyncJobs}. */
    public static Instant jobsSince(Instant requestedAt) {
        return requestedAt.minus(CLOCK_SKEW);
    }

    /**
     * @param done whether what the write was for is true now, as CloudStack shows it
     * @param jobs the key's jobs created since {@link #jobsSince}
     * @param instanceId the resource a job of this command names while it runs (a destroyed VM), if the command names one
     * @param mayArriveWithin how long after it was sent a request may still be taken ({@link CloudStackClientSettings#unansweredWriteWindow})
     */
    public static Verdict of(boolean done, List<AsyncJobResult> jobs, CloudStackCommand command, Optional<String> instanceId,
            Instant requestedAt, Instant now, Duration mayArriveWithin) {
        if (done) {
            return new Done();
        }
        // AsyncJobManagerImpl.completeAsyncJob clears a job's instance when it ends: only a running job can be told apart by it.
        List<AsyncJobResult> ofCommand = jobs.stream().filter(job -> job.runs(command.commandClass())).toList();
        Optional<AsyncJobResult> running = ofCommand.stream().filter(AsyncJobResult::isPending)
                .filter(job -> instanceId.isEmpty() || job.jobInstanceId() == null || instanceId.get().equals(job.jobInstanceId()))
                .min(BY_CREATION);
        if (running.isPresent()) {
            return new Running(running.get().jobId());
        }
        Optional<AsyncJobResult> failed = ofCommand.stream().filter(AsyncJobResult::failed)
                .max(BY_CREATION);
        if (failed.isPresent()) {
            return new Failed(failed.get());
        }
        Instant until = requestedAt.plus(mayArriveWithin);
        return now.isBefore(until) ? new NotYet(until) : new NeverArrived();
    }
}
