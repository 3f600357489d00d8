package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

/**
 * Whose job a lost answer finds. The jobs are the account's (listAsyncJobs), so another cluster's scale,
 * another user's destroy and a job from before the request are among them.
 */
class LostAnswerTest {
    private static final Instant SENT = Instant.parse("2026-11-30T12:00:00Z");
    private static final Duration WINDOW = Duration.ofMinutes(11);
    private static final String DESTROY = "org.apache.cloudstack.api.command.admin.vm.DestroyVMCmdByAdmin";
    private static final String SCALE = "org.apache.cloudstack.api.command.user.kubernetes.cluster.ScaleKubernetesClusterCmd";
    private static final LostAnswer.Request SCALE_OF_A = new LostAnswer.Request(CloudStackCommand.SCALE_KUBERNETES_CLUSTER,
            LostAnswer.JobInstance.kubernetesCluster("cluster-a"), SENT, WINDOW);
    private static final LostAnswer.Request DESTROY_OF_VM1 = new LostAnswer.Request(CloudStackCommand.DESTROY_VIRTUAL_MACHINE,
            LostAnswer.JobInstance.virtualMachine("vm-1"), SENT, WINDOW);
    private static final CloudStackClock SAME_CLOCK = clockAt(Duration.ZERO);

    @Test
    void whatTheWriteWasForBeingTrueDecidesWhateverTheJobsSay() {
        assertThat(LostAnswer.of(true, List.of(job("j1", SCALE, 2, null, "12:00:01")), SCALE_OF_A, SAME_CLOCK, SENT.plusSeconds(5)))
                .isInstanceOf(LostAnswer.Done.class);
    }

    @Test
    void aRunningJobNamingOurResourceIsOursAndFollowed() {
        List<AsyncJobResult> jobs = List.of(job("theirs", DESTROY, 0, "vm-2", "12:00:01"), job("ours", DESTROY, 0, "vm-1", "12:00:02"));
        assertThat(LostAnswer.of(false, jobs, DESTROY_OF_VM1, SAME_CLOCK, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.Running("ours"));
    }

    @Test
    void aJobNamingAnotherResourceIsSomeoneElses() {
        List<AsyncJobResult> jobs = List.of(job("running-for-vm-2", DESTROY, 0, "vm-2", "12:00:02"));
        assertThat(LostAnswer.of(false, jobs, DESTROY_OF_VM1, SAME_CLOCK, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
    }

    @Test
    void anotherClustersFailedScaleInTheWindowIsNotAdoptedTheRequestIsSentAgainOnceItCanNoLongerArrive() {
        // Cluster B of the same account: its scale job names cluster-b (or nothing), created after A's request.
        List<AsyncJobResult> named = List.of(job("b-failed", SCALE, 2, "cluster-b", "12:00:30"));
        List<AsyncJobResult> unnamed = List.of(job("b-failed", SCALE, 2, null, "12:00:30"));
        for (List<AsyncJobResult> jobs : List.of(named, unnamed)) {
            assertThat(LostAnswer.of(false, jobs, SCALE_OF_A, SAME_CLOCK, SENT.plusSeconds(40))).isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
            assertThat(LostAnswer.of(false, jobs, SCALE_OF_A, SAME_CLOCK, SENT.plus(WINDOW))).isInstanceOf(LostAnswer.NeverArrived.class);
        }
    }

    @Test
    void aRunningJobThatNamesNoResourceMayBeOursNothingIsSentBesideIt() {
        assertThat(LostAnswer.of(false, List.of(job("unnamed", SCALE, 0, null, "12:00:02")), SCALE_OF_A, SAME_CLOCK, SENT.plus(WINDOW).plusSeconds(60)))
                .isEqualTo(new LostAnswer.UnattributedRunning("unnamed"));
        assertThat(LostAnswer.of(false, List.of(job("unnamed", SCALE, 0, null, "12:00:01"), job("ours", SCALE, 0, "cluster-a", "12:00:02")),
                SCALE_OF_A, SAME_CLOCK, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.Running("ours"));
    }

    @Test
    void aJobCreatedBeforeTheRequestByCloudStacksClockIsNeverTheRequests() {
        // The UI's scale of the same cluster a minute earlier, still running.
        List<AsyncJobResult> jobs = List.of(job("ui", SCALE, 0, "cluster-a", "11:59:00"), job("ui-failed", SCALE, 2, "cluster-a", "11:59:30"));
        assertThat(LostAnswer.of(false, jobs, SCALE_OF_A, SAME_CLOCK, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
    }

    @Test
    void jobTimesAreReadByCloudStacksMeasuredClock() {
        CloudStackClock behind = clockAt(Duration.ofMinutes(-3));
        // Our request at 12:00:00 is 11:57:00 by CloudStack's clock; its job says so.
        AsyncJobResult ours = job("ours", SCALE, 0, "cluster-a", "11:57:01");
        assertThat(SCALE_OF_A.jobsSince(behind)).isEqualTo(Instant.parse("2026-11-30T11:56:55Z"));
        assertThat(LostAnswer.of(false, List.of(ours), SCALE_OF_A, behind, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.Running("ours"));

        CloudStackClock ahead = clockAt(Duration.ofMinutes(11));
        AsyncJobResult earlier = job("earlier", SCALE, 0, "cluster-a", "12:05:00");
        assertThat(LostAnswer.of(false, List.of(earlier), SCALE_OF_A, ahead, SENT.plusSeconds(10)))
                .as("12:05 by a clock 11 minutes ahead is before our request").isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
    }

    @Test
    void withoutATraceItIsSentAgainOnlyOnceCloudStackCanNoLongerTakeTheRequest() {
        assertThat(LostAnswer.of(false, List.of(job("succeeded-elsewhere", SCALE, 1, "cluster-b", "12:00:01")), SCALE_OF_A, SAME_CLOCK,
                SENT.plus(WINDOW).minusSeconds(1))).isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
        assertThat(LostAnswer.of(false, List.of(), SCALE_OF_A, SAME_CLOCK, SENT.plus(WINDOW))).isInstanceOf(LostAnswer.NeverArrived.class);
    }

    /** A clock measured at SENT as SENT + offset. */
    private static CloudStackClock clockAt(Duration offset) {
        CloudStackClock clock = new CloudStackClock();
        clock.observe(SENT.plus(offset), SENT, SENT);
        return clock;
    }

    @Test
    void unmeasuredJobsAreSearchedFromWellBeforeTheRequestAndARunningOneOfTheCommandIsWaitedFor() {
        CloudStackClock unmeasured = new CloudStackClock();
        assertThat(SCALE_OF_A.jobsSince(unmeasured)).isEqualTo(SENT.minus(CloudStackClock.UNMEASURED_LOOKBACK));
        // CloudStack 3 min behind, not measured yet: its job of our scale is stamped 11:57.
        assertThat(LostAnswer.of(false, List.of(job("maybe-ours", SCALE, 0, null, "11:57:01")), SCALE_OF_A, unmeasured, SENT.plus(WINDOW)))
                .isEqualTo(new LostAnswer.UnattributedRunning("maybe-ours"));
    }

    private static AsyncJobResult job(String id, String cmd, int status, String instance, String created) {
        String type = instance == null ? null : instance.startsWith("vm-") ? "VirtualMachine" : "KubernetesCluster";
        return new AsyncJobResult(id, status, 0, status == 2 ? 530 : 0, "object", null, cmd, type, instance, "2026-11-30T" + created + "+0000");
    }

    // ---- Keys that may not list jobs (the project Kubernetes Service User role) -------------------------------

    @Test
    void withoutJobsWhatCloudStackShowsDecidesFirst() {
        assertThat(LostAnswer.withoutJobs(true, Optional.of("Scaling"), SCALE_OF_A, SENT.plusSeconds(5))).isInstanceOf(LostAnswer.Done.class);
    }

    @Test
    void withoutJobsABusyClusterIsWaitedForEvenPastTheWindow() {
        assertThat(LostAnswer.withoutJobs(false, Optional.of("Scaling"), SCALE_OF_A, SENT.plus(WINDOW).plusSeconds(600)))
                .isEqualTo(new LostAnswer.ClusterBusy("Scaling"));
    }

    @Test
    void withoutJobsAQuietClusterIsJudgedByTime() {
        assertThat(LostAnswer.withoutJobs(false, Optional.empty(), SCALE_OF_A, SENT.plusSeconds(60)))
                .isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
        assertThat(LostAnswer.withoutJobs(false, Optional.empty(), DESTROY_OF_VM1, SENT.plus(WINDOW)))
                .isInstanceOf(LostAnswer.NeverArrived.class);
    }
}
