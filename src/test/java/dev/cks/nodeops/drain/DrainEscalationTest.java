package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.DrainEscalation.HeldPod;
import dev.cks.nodeops.drain.EscalationStep.Action;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;

class DrainEscalationTest {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final HeldPod WEB = new HeldPod(new EvictionApi.PodRef("shop", "web-1", "u1"), Map.of("app", "web"), "shop/web-pdb");
    private static final HeldPod DB = new HeldPod(new EvictionApi.PodRef("shop", "db-1", "u2"), Map.of("app", "db"), "shop/db-pdb");
    private static final String HOLDS = "pdb shop/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed (pods shop/web-1)";

    private static EscalationStep step(int after, Action action, String app) {
        EscalationStep step = new EscalationStep();
        step.setAfterSeconds(after);
        step.setAction(action);
        if (app != null) {
            step.setSelector(new LabelSelectorBuilder().addToMatchLabels("app", app).build());
        }
        return step;
    }

    private static List<EscalationStep> ladder(EscalationStep... steps) {
        DrainOptions options = new DrainOptions();
        options.setEscalation(List.of(steps));
        return DrainEscalation.ladder(options);
    }

    private static DrainEscalation.Decision at(List<EscalationStep> ladder, DrainState state, String cause, long seconds, HeldPod... held) {
        return DrainEscalation.decide(ladder, state, "w-1", cause, HOLDS, List.of(held), Duration.ofSeconds(seconds), NOW.plusSeconds(seconds));
    }

    @Test
    void withoutALadderTheDrainWarnsOncePerCause() {
        List<EscalationStep> ladder = DrainEscalation.ladder(new DrainOptions());
        DrainState state = new DrainState();

        assertThat(at(ladder, state, "shop/web-pdb", 10, WEB).warnings()).singleElement().asString()
                .isEqualTo("The drain of node w-1 is blocked: no pod has left it for 10s because " + HOLDS
                        + ". It carries on as soon as the budget allows another disruption.");
        assertThat(at(ladder, state, "shop/web-pdb", 500, WEB).warnings()).as("once per cause").isEmpty();
        assertThat(at(ladder, state, "shop/db-pdb", 12, DB).warnings()).as("a new cause is announced").hasSize(1);
        assertThat(at(ladder, state, "shop/db-pdb", 900, DB).giveUp()).as("the default ladder never gives up").isEmpty();
    }

    @Test
    void eachStepComesDueInTurnIsTakenOnceAndIsRecordedWithItsTime() {
        List<EscalationStep> ladder = ladder(step(300, Action.SkipNode, null), step(60, Action.Warn, null), step(120, Action.DeletePods, "web"));
        DrainState state = new DrainState();

        assertThat(at(ladder, state, "shop/web-pdb", 59, WEB, DB)).isEqualTo(new DrainEscalation.Decision(List.of(), List.of(),
                java.util.Optional.empty(), ""));
        assertThat(at(ladder, state, "shop/web-pdb", 60, WEB, DB).warnings()).hasSize(1);
        DrainEscalation.Decision delete = at(ladder, state, "shop/web-pdb", 125, WEB, DB);
        assertThat(delete.deletions()).as("only the pods the selector opted in").containsExactly(new DrainEscalation.Deletion(WEB.pod(), null));
        assertThat(at(ladder, state, "shop/web-pdb", 130, WEB, DB).deletions()).as("taken once").isEmpty();
        DrainEscalation.Decision giveUp = at(ladder, state, "shop/web-pdb", 300, WEB, DB);
        assertThat(giveUp.giveUp()).contains(Action.SkipNode);
        assertThat(giveUp.why()).isEqualTo("spec.drain.escalation step 3 (SkipNode after the drain of node w-1 was blocked for 300s, held by "
                + HOLDS + ")");

        assertThat(state.getEscalation()).extracting(EscalationRecord::getStep, EscalationRecord::getAction, EscalationRecord::getAt,
                EscalationRecord::getPods).containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1, Action.Warn, "2026-11-30T12:01:00Z", "shop/web-1, shop/db-1"),
                        org.assertj.core.groups.Tuple.tuple(2, Action.DeletePods, "2026-11-30T12:02:05Z", "shop/web-1"),
                        org.assertj.core.groups.Tuple.tuple(3, Action.SkipNode, "2026-11-30T12:05:00Z", "shop/web-1, shop/db-1"));
    }

    @Test
    void aStepWithASelectorWaitsForItsPodsAndNothingIsDeletedWithoutOne() {
        List<EscalationStep> ladder = ladder(step(60, Action.DeletePods, "web"), step(90, Action.SkipNode, "db"));
        DrainState state = new DrainState();

        DrainEscalation.Decision onlyDb = at(ladder, state, "shop/db-pdb", 80, DB);
        assertThat(onlyDb.deletions()).isEmpty();
        assertThat(at(ladder, state, "shop/db-pdb", 95, DB).giveUp()).contains(Action.SkipNode);
        assertThat(at(ladder, new DrainState(), "shop/web-pdb", 95, WEB).giveUp()).as("SkipNode is for db pods only").isEmpty();
    }

    @Test
    void aDrainThatGivesUpByItselfTakesTheLaddersGiveUpStepThatApplies() {
        List<EscalationStep> ladder = ladder(step(60, Action.Warn, null), step(600, Action.SkipNode, "db"), step(900, Action.Fail, null));
        assertThat(DrainEscalation.onGivingUp(ladder, List.of(DB))).get().extracting(EscalationStep::getAction).isEqualTo(Action.SkipNode);
        assertThat(DrainEscalation.onGivingUp(ladder, List.of(WEB))).get().extracting(EscalationStep::getAction).isEqualTo(Action.Fail);
        assertThat(DrainEscalation.onGivingUp(DrainEscalation.ladder(new DrainOptions()), List.of(WEB))).isEmpty();
    }

    @Test
    void whatTheDeletionsCameToIsWrittenIntoTheirRecord() {
        List<EscalationStep> ladder = ladder(step(60, Action.DeletePods, "web"));
        DrainState state = new DrainState();
        at(ladder, state, "shop/web-pdb", 60, WEB);

        String outcome = DrainEscalation.recordDeletions(state, Map.of(WEB.pod(), new EvictionApi.Answer(403, "pods \"web-1\" is forbidden", List.of())));

        assertThat(outcome).isEqualTo("shop/web-1: HTTP 403: pods \"web-1\" is forbidden");
        assertThat(state.getEscalation()).singleElement().extracting(EscalationRecord::getResult).isEqualTo(outcome);
    }
}
