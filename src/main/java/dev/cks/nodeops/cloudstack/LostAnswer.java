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
 * account's jobs of that command since the request, and only when neither shows anything, time. A request
 * that left no trace and that CloudStack can no longer take (its signature has expired:
 * ApiServer.verifyRequest refuses a request past its {@code expires}) never arrived, and may be sent again.
 *
 * <p>Whose job is it? listAsyncJobs shows every running job of the caller's account
 * (QueryManagerImpl.searchForAsyncJobsInternal; a finished job is marked removed by
 * AsyncJobManagerImpl.completeAsyncJob and no longer listed): another cluster's, another user's, the UI's. A job is taken as the request's only when it runs the same
 * command, was created at or after the request by CloudStack's clock ({@link CloudStackClock}), and names the
 * resource the request acts on ({@code jobinstancetype}/{@code jobinstanceid}, set from the command's
 * getApiResourceType/getApiResourceId when ApiServer queues it). A job that names another resource is
 * someone else's. One that names none cannot be told apart: while it runs, nothing is decided (it may be
 * ours, and re-sending beside it could do the work twice). A finished job is not listed, so its outcome
 * shows only as what CloudStack shows; once the request can no longer arrive, nothing of ours can still
 * take effect, so sending again is safe.
 *
 * <p>Keys that may not list jobs (the project "Kubernetes Service User" role, whose list has no
 * listAsyncJobs: KubernetesClusterManagerImpl.PROJECT_KUBERNETES_ACCOUNT_ROLE_ALLOWED_APIS) are judged
 * without them ({@link #withoutJobs}): what CloudStack shows, then, for a write on the cluster, whether the
 * cluster is busy (a job changing it runs, perhaps ours: nothing is sent while it is), then time.
 */
public final class LostAnswer {

    /** The resource an async job acts on, as its {@code jobinstancetype} and {@code jobinstanceid} name it. */
    public record JobInstance(String type, String id) {
        public static JobInstance virtualMachine(String vmId) {
            return new JobInstance("VirtualMachine", vmId);
        }

        public static JobInstance kubernetesCluster(String clusterId) {
            return new JobInstance("KubernetesCluster", clusterId);
        }

        boolean isNamedBy(AsyncJobResult job) {
            return id.equals(job.jobInstanceId()) && (job.jobInstanceType() == null || type.equalsIgnoreCase(job.jobInstanceType()));
        }
    }

    /**
     * A write that was sent, or may have been.
     *
     * @param requestedAt by our clock, written before the request was sent
     * @param mayArriveWithin how long after it was sent a request may still be taken ({@link CloudStackClientSettings#unansweredWriteWindow})
     */
    public record Request(CloudStackCommand command, JobInstance instance, Instant requestedAt, Duration mayArriveWithin) {
        /** The earliest {@code created}, by CloudStack's clock, of a job that may be this request's. */
        public Instant jobsSince(CloudStackClock clock) {
            return clock.measured() ? clock.toCloudStack(requestedAt).minus(CloudStackClock.TOLERANCE)
                    : requestedAt.minus(CloudStackClock.UNMEASURED_LOOKBACK);
        }
    }

    public sealed interface Verdict {
    }

    /** What the write was for is true (done by this request or otherwise). */
    public record Done() implements Verdict {
    }

    /** A job of the command for our resource, started since the request, still runs: it is ours; poll it. */
    public record Running(String jobId) implements Verdict {
    }

    /**
     * A job of the command that names no resource runs since the request: it may be ours. Nothing is sent
     * or concluded until it has ended.
     */
    public record UnattributedRunning(String jobId) implements Verdict {
    }

    /**
     * The jobs could not be listed, and the cluster the write acts on is in a state in which CloudStack is
     * changing it ({@link CloudStackAccess#isBusy}): a job, perhaps ours, runs. Nothing is sent or concluded
     * until it is over.
     */
    public record ClusterBusy(String state) implements Verdict {
    }

    /** No trace yet, but the request could still reach CloudStack until {@code until}: look again then. */
    public record NotYet(Instant until) implements Verdict {
    }

    /** No trace, and the request can no longer be taken: it never arrived (or ended without effect); send it again. */
    public record NeverArrived() implements Verdict {
    }

    private enum Attribution {
        OURS, SOMEONE_ELSES, UNKNOWN
    }

    private static final Comparator<AsyncJobResult> BY_CREATION =
            Comparator.comparing(job -> CloudStackTimestamps.parse(job.created()).orElse(Instant.EPOCH));

    private LostAnswer() {
    }

    /**
     * @param done whether what the write was for is true now, as CloudStack shows it
     * @param jobs the account's jobs ({@link CloudStackClient#listAsyncJobs} since {@link Request#jobsSince})
     * @param clock CloudStack's clock, to tell jobs created before the request
     */
    public static Verdict of(boolean done, List<AsyncJobResult> jobs, Request request, CloudStackClock clock, Instant now) {
        if (done) {
            return new Done();
        }
        Instant since = request.jobsSince(clock);
        List<AsyncJobResult> candidates = jobs.stream().filter(job -> job.runs(request.command().commandClass()))
                .filter(job -> CloudStackTimestamps.parse(job.created()).map(created -> !created.isBefore(since)).orElse(true))
                .filter(job -> attribution(job, request.instance()) != Attribution.SOMEONE_ELSES)
                .toList();
        Optional<AsyncJobResult> ours = candidates.stream().filter(AsyncJobResult::isPending)
                .filter(job -> attribution(job, request.instance()) == Attribution.OURS).min(BY_CREATION);
        if (ours.isPresent()) {
            return new Running(ours.get().jobId());
        }
        Optional<AsyncJobResult> unattributed = candidates.stream().filter(AsyncJobResult::isPending).min(BY_CREATION);
        if (unattributed.isPresent()) {
            return new UnattributedRunning(unattributed.get().jobId());
        }
        return byTime(request, now);
    }

    /**
     * The verdict when the account's jobs cannot be listed (the keys may not call listAsyncJobs).
     *
     * @param busyClusterState the state of the cluster the write acts on when CloudStack is changing it; empty
     *        when it is not, or when the write acts on a VM
     */
    public static Verdict withoutJobs(boolean done, Optional<String> busyClusterState, Request request, Instant now) {
        if (done) {
            return new Done();
        }
        if (busyClusterState.isPresent()) {
            return new ClusterBusy(busyClusterState.get());
        }
        return byTime(request, now);
    }

    private static Verdict byTime(Request request, Instant now) {
        Instant until = request.requestedAt().plus(request.mayArriveWithin());
        return now.isBefore(until) ? new NotYet(until) : new NeverArrived();
    }

    private static Attribution attribution(AsyncJobResult job, JobInstance ours) {
        if (job.jobInstanceId() == null) {
            return Attribution.UNKNOWN;
        }
        return ours.isNamedBy(job) ? Attribution.OURS : Attribution.SOMEONE_ELSES;
    }
}
