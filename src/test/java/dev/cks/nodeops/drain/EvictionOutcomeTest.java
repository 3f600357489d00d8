package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.BlockedByReport.Cause;
import dev.cks.nodeops.drain.BlockedByReport.StuckPod;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import dev.cks.nodeops.drain.EvictionOutcome.Answered;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class EvictionOutcomeTest {
    private static final Answer ACCEPTED = new Answer(201, "", List.of());
    private static final Answer NOT_FOUND = new Answer(404, "pods \"x\" not found", List.of());
    private static final Answer NAMED_BUDGET = new Answer(429, "Cannot evict pod as it would violate the pod's disruption budget.",
            List.of("The disruption budget web-pdb needs 3 healthy pods and has 3 currently"));
    private static final Answer UNNAMED_BUDGET = new Answer(429, "Cannot evict pod as it would violate the pod's disruption budget.", List.of());
    private static final Answer SERVER_ERROR = new Answer(500, "etcdserver: request timed out", List.of());

    @Test
    void eachAnswerIsGoneEvictedRefusedByABudgetOrFailed() {
        assertThat(Answered.of(ACCEPTED)).isEqualTo(Answered.EVICTED);
        assertThat(Answered.of(NOT_FOUND)).isEqualTo(Answered.GONE);
        assertThat(Answered.of(new Answer(409, "Precondition failed: UID in precondition: a, UID in object meta: b", List.of())))
                .as("a namesake replaced the pod we saw").isEqualTo(Answered.GONE);
        assertThat(Answered.of(new Answer(409, "Operation cannot be fulfilled", List.of()))).isEqualTo(Answered.FAILED);
        assertThat(Answered.of(NAMED_BUDGET)).isEqualTo(Answered.REFUSED_BY_BUDGET);
        assertThat(Answered.of(SERVER_ERROR)).isEqualTo(Answered.FAILED);
        assertThat(Answered.of(new Answer(0, "connect timed out", List.of()))).as("no answer at all").isEqualTo(Answered.FAILED);
        assertThat(List.of(Answered.values())).extracting(a -> a.label).containsExactly("gone", "evicted", "blocked", "error");
    }

    @Test
    void sortsARoundsPodsByTheirAnswersAndKeepsTheLastFailure() {
        Map<Pod, Answer> answers = new LinkedHashMap<>();
        answers.put(pod("web-0"), ACCEPTED);
        answers.put(pod("web-1"), NOT_FOUND);
        answers.put(pod("web-2"), NAMED_BUDGET);
        answers.put(pod("web-3"), UNNAMED_BUDGET);
        answers.put(pod("web-4"), SERVER_ERROR);

        EvictionOutcome outcome = EvictionOutcome.of(answers, false, new DrainOptions());

        assertThat(outcome.evicted()).extracting(p -> p.getMetadata().getName()).containsExactly("web-0");
        assertThat(outcome.gone()).isEqualTo(1);
        assertThat(outcome.stuck()).containsExactly(
                new StuckPod("shop", "web-0", Cause.TERMINATING, "evicted just now"),
                new StuckPod("shop", "web-2", Cause.DISRUPTION_BUDGET, "shop/web-pdb"),
                new StuckPod("shop", "web-3", Cause.DISRUPTION_BUDGET, UNNAMED_BUDGET.message()),
                new StuckPod("shop", "web-4", Cause.API_ERROR, "HTTP 500: etcdserver: request timed out"));
        assertThat(outcome.refusedByBudget()).extracting(p -> p.getMetadata().getName()).containsExactly("web-2", "web-3");
        assertThat(outcome.refusedWith429()).isTrue();
        assertThat(outcome.apiError()).isTrue();
        assertThat(outcome.lastApiError()).isEqualTo("evicting shop/web-4: HTTP 500: etcdserver: request timed out");
    }

    @Test
    void anAcceptedDryRunMeansThePodCouldHaveGoneInTime() {
        EvictionOutcome outcome = EvictionOutcome.of(Map.of(pod("web-0"), ACCEPTED), true, new DrainOptions());

        assertThat(outcome.evicted()).isEmpty();
        assertThat(outcome.stuck()).containsExactly(new StuckPod("shop", "web-0", Cause.NOT_EVICTED_IN_TIME, ""));
        assertThat(outcome.lastApiError()).isNull();
        assertThat(outcome.refusedWith429()).isFalse();
        assertThat(outcome.apiError()).isFalse();
    }

    @Test
    void aFailedDeleteSaysThatItBypassedTheBudgets() {
        DrainOptions deleting = new DrainOptions();
        deleting.setDisableEviction(true);

        EvictionOutcome outcome = EvictionOutcome.of(Map.of(pod("web-0"), SERVER_ERROR), false, deleting);

        assertThat(outcome.lastApiError())
                .isEqualTo("deleting (disableEviction bypasses PodDisruptionBudgets) shop/web-0: HTTP 500: etcdserver: request timed out");
    }

    private static Pod pod(String name) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).withUid("uid-" + name).addToLabels("app", "web").endMetadata()
                .build();
    }
}
