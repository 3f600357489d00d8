package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class LostAnswerTest {
    private static final Instant SENT = Instant.parse("2026-11-30T12:00:00Z");
    private static final Duration WINDOW = Duration.ofMinutes(11);
    private static final String DESTROY = "org.apache.cloudstack.api.command.admin.vm.DestroyVMCmdByAdmin";
    private static final String SCALE = "org.apache.cloudstack.api.command.user.kubernetes.cluster.ScaleKubernetesClusterCmd";

    @Test
    void whatTheWriteWasForBeingTrueDecidesWhateverTheJobsSay() {
        assertThat(verdict(true, List.of(job("j1", SCALE, 2, null, "12:00:01")), SENT.plusSeconds(5))).isInstanceOf(LostAnswer.Done.class);
    }

    @Test
    void aRunningJobOfTheCommandIsFollowedTheEarliestFirst() {
        List<AsyncJobResult> jobs = List.of(job("later", SCALE, 0, null, "12:00:09"), job("first", SCALE, 0, null, "12:00:02"),
                job("other", DESTROY, 0, "vm-9", "12:00:01"));
        assertThat(verdict(false, jobs, SENT.plusSeconds(10))).isEqualTo(new LostAnswer.Running("first"));
    }

    @Test
    void aRunningJobNamingAnotherResourceIsNotOurs() {
        List<AsyncJobResult> jobs = List.of(job("theirs", DESTROY, 0, "vm-2", "12:00:02"));
        assertThat(LostAnswer.of(false, jobs, CloudStackCommand.DESTROY_VIRTUAL_MACHINE, Optional.of("vm-1"), SENT, SENT.plusSeconds(10), WINDOW))
                .isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
        assertThat(LostAnswer.of(false, List.of(job("ours", DESTROY, 0, "vm-1", "12:00:02")), CloudStackCommand.DESTROY_VIRTUAL_MACHINE,
                Optional.of("vm-1"), SENT, SENT.plusSeconds(10), WINDOW)).isEqualTo(new LostAnswer.Running("ours"));
    }

    @Test
    void aFailedJobWhoseEffectIsMissingIsTheFailure() {
        AsyncJobResult failed = job("failed", SCALE, 2, null, "12:00:02");
        assertThat(verdict(false, List.of(job("done-elsewhere", SCALE, 1, null, "12:00:01"), failed), SENT.plusSeconds(10)))
                .isEqualTo(new LostAnswer.Failed(failed));
    }

    @Test
    void withoutATraceItIsSentAgainOnlyOnceCloudStackCanNoLongerTakeTheRequest() {
        assertThat(verdict(false, List.of(job("succeeded-for-someone-else", SCALE, 1, null, "12:00:01")), SENT.plus(WINDOW).minusSeconds(1)))
                .isEqualTo(new LostAnswer.NotYet(SENT.plus(WINDOW)));
        assertThat(verdict(false, List.of(), SENT.plus(WINDOW))).isInstanceOf(LostAnswer.NeverArrived.class);
    }

    @Test
    void jobsAreAskedForFromBeforeTheRequestAsCloudStacksClockMayLag() {
        assertThat(LostAnswer.jobsSince(SENT)).isEqualTo(SENT.minus(LostAnswer.CLOCK_SKEW));
    }

    private static LostAnswer.Verdict verdict(boolean done, List<AsyncJobResult> jobs, Instant now) {
        return LostAnswer.of(done, jobs, CloudStackCommand.SCALE_KUBERNETES_CLUSTER, Optional.empty(), SENT, now, WINDOW);
    }

    private static AsyncJobResult job(String id, String cmd, int status, String instance, String created) {
        return new AsyncJobResult(id, status, 0, status == 2 ? 530 : 0, "object", null, cmd, instance == null ? null : "VirtualMachine", instance,
                "2026-11-30T" + created + "+0000");
    }
}
