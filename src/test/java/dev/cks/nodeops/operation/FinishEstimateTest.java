package dev.cks.nodeops.operation;

import static dev.cks.nodeops.testing.TestWindows.window;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.FinishEstimate.Estimate;
import dev.cks.nodeops.operation.FinishEstimate.Finished;
import dev.cks.nodeops.operation.FinishEstimate.Plan;
import dev.cks.nodeops.operation.FinishEstimate.Stage;
import dev.cks.nodeops.operation.FinishEstimate.Work;
import dev.cks.nodeops.operation.MaintenanceWindow.Day;

/** The estimate of an operation's finish and whether it fits its window, on plain plans with time moved by hand. */
class FinishEstimateTest {
    /** Monday 2026-11-30, 12:00 UTC. */
    private static final Instant MONDAY_NOON = Instant.parse("2026-11-30T12:00:00Z");
    private static final Map<String, Duration> PRIORS = Map.of("control-plane", Duration.ofMinutes(15), "worker", Duration.ofMinutes(6));

    private final ManualTime clock = new ManualTime(MONDAY_NOON);

    private static List<Work> pending(String kind, int count) {
        return Collections.nCopies(count, Work.pending(kind));
    }

    private Estimate estimate(Plan plan, MaintenanceWindow window) {
        return FinishEstimate.of(plan, window, clock.instant()).orElseThrow();
    }

    @Test
    void beforeAnyNodeFinishedThePriorsAndTheWavesMaxUnavailableAllowsGiveTheFinish() {
        Plan plan = new Plan(List.of(new Stage(pending("control-plane", 1), 1), new Stage(pending("worker", 5), 2)), List.of(), PRIORS);

        Estimate estimate = estimate(plan, null);

        assertThat(estimate.finish()).as("15 min for the control plane, then 3 waves of 6 min (2 + 2 + 1 workers)")
                .isEqualTo(MONDAY_NOON.plus(Duration.ofMinutes(15 + 3 * 6)));
        assertThat(estimate.measured()).isFalse();
        assertThat(estimate.basis()).isEqualTo("6 left; control-plane 15 min a node, prior; worker 6 min a node, prior");
    }

    @Test
    void finishedNodesReplaceThePriorOfTheirKindWithTheirMeanAndANodeInProgressNeedsWhatIsLeftOfIt() {
        // Two workers took 2 and 3 minutes; the third began a minute ago; three more to go, one at a time.
        clock.advance(Duration.ofMinutes(6));
        Plan plan = new Plan(List.of(new Stage(List.of(), 1),
                new Stage(List.of(new Work("worker", clock.instant().minus(Duration.ofMinutes(1))), Work.pending("worker"), Work.pending("worker"),
                        Work.pending("worker")), 1)),
                List.of(new Finished("worker", Duration.ofMinutes(2)), new Finished("worker", Duration.ofMinutes(3))), PRIORS);

        Estimate estimate = estimate(plan, null);

        assertThat(estimate.finish()).as("1.5 min left of the one in progress, then 3 of 2.5 min")
                .isEqualTo(clock.instant().plus(Duration.ofSeconds(90 + 3 * 150)));
        assertThat(estimate.measured()).isTrue();
        assertThat(estimate.basis()).isEqualTo("4 left; worker 2 min 30 s a node, measured: the mean of 2 finished here");
    }

    @Test
    void aNodePastItsExpectedTimeIsGivenATenthOfItMoreFromNowAndTheEstimateMovesAsTimeDoes() {
        Plan plan = new Plan(List.of(new Stage(List.of(new Work("worker", MONDAY_NOON)), 1)), List.of(), PRIORS);
        clock.advance(Duration.ofMinutes(10));

        Instant first = estimate(plan, null).finish();
        clock.advance(Duration.ofMinutes(1));

        assertThat(first).isEqualTo(MONDAY_NOON.plus(Duration.ofMinutes(10)).plus(Duration.ofSeconds(36)));
        assertThat(estimate(plan, null).finish()).isEqualTo(first.plus(Duration.ofMinutes(1)));
    }

    @Test
    void noNodeStartsInAClosedWindowSoTheRestMovesToTheNextOpeningAndANodeBegunBeforeTheCloseRunsToItsEnd() {
        // Open Mondays 12:00-12:10: two workers of 6 min fit one after another only partly.
        MaintenanceWindow window = window("UTC", "12:00", "12:10", Day.Mon);
        Plan plan = new Plan(List.of(new Stage(pending("worker", 3), 1)), List.of(), PRIORS);

        Estimate estimate = estimate(plan, window);

        // 12:00-12:06 the first, 12:06-12:12 the second (begun inside, finished after the close), the third next Monday.
        assertThat(estimate.finish()).isEqualTo(Instant.parse("2026-12-07T12:06:00Z"));
    }

    @Test
    void createdOutsideItsWindowTheEstimateStartsAtTheOpening() {
        MaintenanceWindow window = window("Europe/Berlin", "01:00", "05:00", Day.Sat);
        Plan plan = new Plan(List.of(new Stage(pending("worker", 2), 1)), List.of(), PRIORS);

        // Saturday 2026-12-05 01:00 in Berlin is 00:00 UTC.
        assertThat(estimate(plan, window).finish()).isEqualTo(Instant.parse("2026-12-05T00:12:00Z"));
    }

    @Test
    void nothingLeftOrAWindowThatCannotBeReadGivesNoEstimate() {
        Plan nothing = new Plan(List.of(new Stage(List.of(), 1)), List.of(), PRIORS);
        MaintenanceWindow unreadable = window("Mars/Olympus", "01:00", "05:00", Day.Sat);
        Plan some = new Plan(List.of(new Stage(pending("worker", 1), 1)), List.of(), PRIORS);

        assertThat(FinishEstimate.of(nothing, null, clock.instant())).isEmpty();
        assertThat(FinishEstimate.of(some, unreadable, clock.instant())).isEmpty();
    }

    @Test
    void aRunThatFitsItsWindowProceedsAndSaysSoWithoutWarning() {
        MaintenanceWindow window = window("UTC", "12:00", "13:00", Day.Mon);
        Optional<Estimate> estimate = FinishEstimate.of(new Plan(List.of(new Stage(pending("worker", 3), 1)), List.of(), PRIORS), window, clock.instant());

        WindowFit.Verdict verdict = WindowFit.check(estimate, window, Preflight.Fail, "NodeUpgrade to-1-35", clock.instant());

        assertThat(verdict).isInstanceOfSatisfying(WindowFit.Proceed.class, proceed -> {
            assertThat(proceed.warn()).isFalse();
            assertThat(proceed.message()).contains("estimated to finish at 2026-11-30T12:18:00Z", "inside the window open now");
        });
    }

    @Test
    void aRunPastItsWindowIsRefusedWithFailWithTheEstimateAndTheWindowAndWarnedAboutWithWarn() {
        MaintenanceWindow window = window("UTC", "12:00", "12:10", Day.Mon);
        Optional<Estimate> estimate = FinishEstimate.of(new Plan(List.of(new Stage(pending("worker", 3), 1)), List.of(), PRIORS), window, clock.instant());

        WindowFit.Verdict fail = WindowFit.check(estimate, window, Preflight.Fail, "NodeUpgrade to-1-35", clock.instant());
        WindowFit.Verdict warn = WindowFit.check(estimate, window, Preflight.Warn, "NodeUpgrade to-1-35", clock.instant());
        WindowFit.Verdict skip = WindowFit.check(estimate, window, Preflight.Skip, "NodeUpgrade to-1-35", clock.instant());

        assertThat(fail).isInstanceOfSatisfying(WindowFit.Refuse.class, refuse -> assertThat(refuse.message()).contains(
                "NodeUpgrade to-1-35 is estimated to finish at 2026-12-07T12:06:00Z (3 left; worker 6 min a node, prior)",
                "after the end of the window open now, which closes on Mon 2026-11-30 12:10 UTC (2026-11-30T12:10:00Z)",
                "Nothing was cordoned", "spec.preflight: Warn"));
        assertThat(warn).isInstanceOfSatisfying(WindowFit.Proceed.class, proceed -> {
            assertThat(proceed.warn()).isTrue();
            assertThat(proceed.message()).contains("after the end of the window", "waits for the next opening");
        });
        assertThat(skip).isEqualTo(new WindowFit.Proceed(null, false));
    }

    @Test
    void withoutAWindowThereIsNothingToFit() {
        Optional<Estimate> estimate = FinishEstimate.of(new Plan(List.of(new Stage(pending("worker", 3), 1)), List.of(), PRIORS), null, clock.instant());

        assertThat(WindowFit.check(estimate, null, Preflight.Fail, "ScaleDown remove-two", clock.instant())).isEqualTo(new WindowFit.Proceed(null, false));
    }
}
