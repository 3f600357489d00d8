package dev.cks.nodeops.operation;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.cks.nodeops.cloudstack.AsyncJobResult;
import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.CloudStackException;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.JobWait;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.LostAnswer;
import dev.cks.nodeops.cloudstack.WriteFailure;
import dev.cks.nodeops.common.Timestamps;

/**
 * The one way a CloudStack write is made, for every kind and every write (scaleKubernetesCluster,
 * removeNodesFromKubernetesCluster, destroyVirtualMachine, attachIso, detachIso, and a synchronous write
 * without a job): sent once, crash-safe, never assumed done or undone.
 *
 * <ol>
 * <li>Nothing in flight: if what the write is for is true already, nothing is sent. Otherwise the request
 * time is persisted (the intent), then it is sent, then its job id is persisted. A kill between any two
 * of these leaves a status from which the next operator decides without sending twice.</li>
 * <li>A job recorded: it is polled until it ends; a job CloudStack no longer knows is judged by what
 * CloudStack shows.</li>
 * <li>Sent without a job (the answer lost, or a kill before it was recorded): looked up
 * ({@link LostAnswer}): what CloudStack shows, then the account's jobs, then time; keys that may not list jobs
 * wait instead while the cluster a cluster-level write acts on is busy.</li>
 * </ol>
 * A failed send is classified ({@link WriteFailure}): refused (nothing happened: the kind's failure),
 * refused for now (asked again later), or unknown (looked up from the next step on).
 *
 * <p>What is said goes through the kind's {@link Report}: the conditions and events are the kind's, the
 * decisions are this class's.
 */
public final class CloudStackWrite {
    public static final String ANSWER_LOST = "CloudStackAnswerLost";
    public static final String CLOCK_SKEW = "CloudStackClockSkew";
    public static final String REQUEST_RESENT = "RequestResent";
    /** While a request whose answer was lost may still arrive, how often CloudStack is looked at for its job. */
    static final Duration LOOK_FOR_LATE_REQUEST = Duration.ofMinutes(1);

    /** Where one write's request time and job id are kept in the operation's status. */
    public interface Record {
        /** By our clock; null when nothing is in flight. */
        Instant requestedAt();

        String jobId();

        void requestedAt(Instant at);

        void jobId(String id);

        /** A record kept in status fields: the request time as a timestamp string, the job id as it is. */
        static Record inStatus(Supplier<String> requestedAt, Consumer<String> setRequestedAt, Supplier<String> jobId, Consumer<String> setJobId) {
            return new Record() {
                @Override
                public Instant requestedAt() {
                    return Timestamps.parse(requestedAt.get());
                }

                @Override
                public String jobId() {
                    return jobId.get();
                }

                @Override
                public void requestedAt(Instant at) {
                    setRequestedAt.accept(Timestamps.format(at));
                }

                @Override
                public void jobId(String id) {
                    setJobId.accept(id);
                }
            };
        }

        /**
         * A record of a synchronous write kept nowhere: each step starts with nothing in flight, so it looks at
         * CloudStack (the write's {@code done}) before sending again. For writes whose repetition changes nothing.
         */
        static Record unkept() {
            return new Unkept();
        }
    }

    private static final class Unkept implements Record {
        private Instant requestedAt;
        private String jobId;

        @Override
        public Instant requestedAt() {
            return requestedAt;
        }

        @Override
        public String jobId() {
            return jobId;
        }

        @Override
        public void requestedAt(Instant at) {
            requestedAt = at;
        }

        @Override
        public void jobId(String id) {
            jobId = id;
        }
    }

    /**
     * What a kind says about one write; the protocol is this class's.
     *
     * @param what the write in a sentence's words, e.g. "attachIso of ISO x to VM y (node n)"
     * @param instance the resource its job names while it runs, where CloudStack names one
     * @param done whether what it is for is true in CloudStack now: a read, never assumed
     * @param send sends it: its job id, or null for a synchronous command that has no job
     * @param sent told its job id once that is recorded: the kind's event for the request, if it has one
     */
    public record Write(CloudStackCommand command, String what, LostAnswer.JobInstance instance, Predicate<CloudStackClient> done,
            Function<CloudStackClient, String> send, Record record, KillPoints killPoints, Consumer<String> sent) {

        public Write(CloudStackCommand command, String what, LostAnswer.JobInstance instance, Predicate<CloudStackClient> done,
                Function<CloudStackClient, String> send, Record record, KillPoints killPoints) {
            this(command, what, instance, done, send, record, killPoints, jobId -> { });
        }
    }

    /** The kill points around one write; any may be null where the write has none. */
    public record KillPoints(KillPoint intent, KillPoint answered, KillPoint succeeded) {
        public static final KillPoints NONE = new KillPoints(null, null, null);

        static void reach(KillPoint point) {
            if (point != null) {
                point.reached();
            }
        }
    }

    /** How a write's progress is told and persisted: the kind's recorder and status store, bound to its resource. */
    public interface Report {
        void persist();

        void waiting(String reason, String message);

        void progressing(String message);

        void event(String reason, String message);

        void warning(String reason, String message);
    }

    public sealed interface Outcome {
    }

    /** What the write is for is true; its job when one was seen succeeding. */
    public record Done(Optional<AsyncJobResult> job) implements Outcome {
    }

    /** CloudStack turned it away before acting on it: nothing happened. */
    public record Refused(String message) implements Outcome {
    }

    /** It ran and failed, or its job is gone and its effect absent; {@code job} when its record was read. */
    public record Failed(Optional<AsyncJobResult> job, String message) implements Outcome {
    }

    /** Not over: the step to take. What is happening is already said through the {@link Report}. */
    public record Pending(Step step) implements Outcome {
    }

    private final Duration recheckCloudStack;

    /** @param recheckCloudStack how long to wait before asking again after CloudStack turned a request away for now */
    public CloudStackWrite(Duration recheckCloudStack) {
        this.recheckCloudStack = recheckCloudStack;
    }

    /** One step of the write. Reads that fail throw {@link CloudStackException}: the caller waits and steps again. */
    public Outcome advance(CloudStackClient cloudStack, Write write, Report report, Instant now) {
        Record record = write.record();
        if (record.jobId() != null) {
            return poll(cloudStack, write, report, now);
        }
        if (record.requestedAt() != null) {
            return lookUp(cloudStack, write, report, now);
        }
        if (write.done().test(cloudStack)) {
            return new Done(Optional.empty());
        }
        return send(cloudStack, write, report, now);
    }

    private Outcome send(CloudStackClient cloudStack, Write write, Report report, Instant now) {
        // Its expiry and the search for its job, should the answer be lost, are by CloudStack's clock: read it first.
        cloudStack.measureClockIfStale();
        Record record = write.record();
        // Persist before act: from here on a restart looks at CloudStack instead of asking again.
        record.requestedAt(now);
        report.persist();
        KillPoints.reach(write.killPoints().intent());
        cloudStack.cloudStackClock().skew().ifPresent(skew -> report.warning(CLOCK_SKEW, skew + ": " + write.what()
                + " is signed for CloudStack's clock and its job looked for by that clock."));
        String jobId;
        try {
            jobId = write.send().apply(cloudStack);
        } catch (CloudStackException e) {
            return sendFailed(write, report, e);
        }
        KillPoints.reach(write.killPoints().answered());
        if (jobId == null) {
            record.requestedAt(null);
            return new Done(Optional.empty());
        }
        record.jobId(jobId);
        report.persist();
        write.sent().accept(jobId);
        return new Pending(Step.after(JobWait.FIRST_POLL));
    }

    private Outcome sendFailed(Write write, Report report, CloudStackException e) {
        Record record = write.record();
        return switch (WriteFailure.of(e)) {
            case REFUSED -> {
                record.requestedAt(null);
                yield new Refused("CloudStack refused " + write.what() + ": " + e.getMessage());
            }
            case REFUSED_FOR_NOW -> {
                // Written now: a request time left in status would make the next step look for the request for minutes.
                record.requestedAt(null);
                report.persist();
                report.waiting(CloudStackWait.reason(e), "CloudStack turned " + write.what() + " away before acting on it (" + e.getMessage()
                        + "); asking again in " + recheckCloudStack.toSeconds() + "s.");
                yield new Pending(Step.after(recheckCloudStack));
            }
            case UNKNOWN -> {
                report.waiting(ANSWER_LOST, "CloudStack's answer to " + write.what() + " was lost (" + e.getMessage()
                        + "); it may have been done, so CloudStack's state and its jobs are read before anything is asked again.");
                yield new Pending(Step.after(JobWait.FIRST_POLL));
            }
        };
    }

    private Outcome poll(CloudStackClient cloudStack, Write write, Report report, Instant now) {
        Record record = write.record();
        String jobId = record.jobId();
        AsyncJobResult job;
        try {
            job = cloudStack.queryAsyncJob(jobId);
        } catch (CloudStackException e) {
            if (!e.isUnknownId()) {
                throw e;
            }
            // AsyncJobManagerImpl's GC task expunges a finished job job.expire.minutes (a day) after it ended:
            // that one is over, and what CloudStack shows is what it did.
            return write.done().test(cloudStack) ? new Done(Optional.empty())
                    : new Failed(Optional.empty(), "CloudStack no longer knows job " + jobId + " (" + write.what() + "), and it has not taken effect.");
        }
        if (job.isPending()) {
            Instant since = record.requestedAt();
            report.progressing(JobWait.pending("Waiting for CloudStack job " + jobId + " (" + write.what() + ")", jobId, since, now));
            return new Pending(Step.after(JobWait.pollInterval(since, now)));
        }
        if (job.succeeded()) {
            KillPoints.reach(write.killPoints().succeeded());
            return new Done(Optional.of(job));
        }
        CloudStackResponses.ApiError error = CloudStackResponses.jobError(job);
        return new Failed(Optional.of(job), "CloudStack job " + jobId + " (" + write.what() + ") failed: " + error.errorText()
                + " (error " + error.errorCode() + ").");
    }

    /** Whether a job has ended (or is no longer known): a read of it, which adopts nothing. */
    private static boolean ended(CloudStackClient cloudStack, String jobId) {
        try {
            return !cloudStack.queryAsyncJob(jobId).isPending();
        } catch (CloudStackException e) {
            if (e.isUnknownId()) {
                return true;
            }
            throw e;
        }
    }

    /**
     * The account's jobs decide, unless these keys may not list them (known from the permission preflight or a
     * 432, asked again at most every {@link CloudStackClient#PERMISSIONS_TTL}): then what CloudStack shows and
     * time, and the jobs are not searched ({@link LostAnswer#withoutJobs}).
     */
    private static LostAnswer.Verdict withJobsIfListed(CloudStackClient cloudStack, Write write, LostAnswer.Request request, Instant now) {
        if (cloudStack.permissions(List.of(CloudStackCommand.LIST_ASYNC_JOBS)).get(CloudStackCommand.LIST_ASYNC_JOBS)) {
            try {
                List<AsyncJobResult> jobs = cloudStack.listAsyncJobs(request.jobsSince(cloudStack.cloudStackClock()));
                return LostAnswer.of(false, jobs, request, cloudStack.cloudStackClock(), now);
            } catch (CloudStackException e) {
                if (!e.isUnsupportedAction()) {
                    throw e;
                }
            }
        }
        return LostAnswer.withoutJobs(false, busyCluster(cloudStack, write.instance()), request, now);
    }

    /** The state of the cluster a cluster-level write acts on, when CloudStack is changing it. */
    private static Optional<String> busyCluster(CloudStackClient cloudStack, LostAnswer.JobInstance instance) {
        if (instance == null || !"KubernetesCluster".equals(instance.type())) {
            return Optional.empty();
        }
        return cloudStack.findKubernetesCluster(instance.id()).filter(CloudStackAccess::isBusy).map(KubernetesCluster::state);
    }

    private Outcome lookUp(CloudStackClient cloudStack, Write write, Report report, Instant now) {
        Record record = write.record();
        // Its job is stamped by CloudStack's clock as it is now, which may have moved since it was last read.
        cloudStack.measureClockUnlessMeasuredSince(record.requestedAt());
        LostAnswer.Request request = new LostAnswer.Request(write.command(), write.instance(), record.requestedAt(),
                cloudStack.settings().unansweredWriteWindow());
        boolean done = write.done().test(cloudStack);
        LostAnswer.Verdict verdict = done ? new LostAnswer.Done() : withJobsIfListed(cloudStack, write, request, now);
        if (verdict instanceof LostAnswer.Done) {
            return new Done(Optional.empty());
        }
        if (verdict instanceof LostAnswer.NotYet notYet) {
            report.waiting(ANSWER_LOST, "CloudStack shows no job and no effect of " + write.what() + " yet; the request could still reach it until "
                    + Timestamps.format(notYet.until()) + ", so it is not sent again before then; looking for it every "
                    + LOOK_FOR_LATE_REQUEST.toSeconds() + "s.");
            Instant next = now.plus(LOOK_FOR_LATE_REQUEST);
            return new Pending(Step.at(next.isBefore(notYet.until()) ? next : notYet.until(), now));
        }
        if (verdict instanceof LostAnswer.ClusterBusy busy) {
            report.waiting(ANSWER_LOST, "CloudStack shows no effect of " + write.what() + " yet, and the cluster is " + busy.state()
                    + ": a job changing it runs, perhaps this request's (these keys may not list CloudStack's jobs to tell). Nothing is "
                    + "sent again while it is; looking again every " + LOOK_FOR_LATE_REQUEST.toSeconds() + "s.");
            return new Pending(Step.after(LOOK_FOR_LATE_REQUEST));
        }
        if (verdict instanceof LostAnswer.NeverArrived) {
            record.requestedAt(null);
            report.persist();
            report.event(REQUEST_RESENT, "CloudStack never received " + write.what() + " (no job of it, no effect, and the request can no longer "
                    + "be taken); sending it again.");
            return new Pending(Step.next());
        }
        if (verdict instanceof LostAnswer.UnattributedRunning other) {
            // Looked at, not adopted: once it has ended, what CloudStack shows decides at once.
            if (ended(cloudStack, other.jobId())) {
                return new Pending(Step.next());
            }
            Instant since = record.requestedAt();
            report.progressing(JobWait.pending("CloudStack runs job " + other.jobId() + " of " + write.command().apiName() + " since " + write.what()
                    + " was sent and its answer lost; the job names no resource, so it may be ours: nothing is sent or concluded before it ends",
                    other.jobId(), since, now));
            return new Pending(Step.after(JobWait.pollInterval(since, now)));
        }
        String jobId = ((LostAnswer.Running) verdict).jobId();
        record.jobId(jobId);
        report.persist();
        report.progressing("Found CloudStack job " + jobId + " of " + write.what() + ", whose answer was lost; following it.");
        return new Pending(Step.next());
    }
}
