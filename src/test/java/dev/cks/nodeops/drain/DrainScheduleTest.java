package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainSchedule.Decision;
import dev.cks.nodeops.drain.DrainSchedule.Kind;

class DrainScheduleTest {
    private static final Instant T0 = Instant.parse("2026-05-01T10:00:00Z");

    private static DrainOptions options(Integer timeout, Integer retries, Integer interval) {
        DrainOptions options = new DrainOptions();
        options.setTimeoutSeconds(timeout);
        options.setRetries(retries);
        options.setRetryIntervalSeconds(interval);
        return options;
    }

    private static DrainState state(Integer attempt, Instant startedAt, Instant nextAttemptAt) {
        DrainState state = new DrainState();
        state.setAttempt(attempt);
        state.setAttemptStartedAt(Timestamps.format(startedAt));
        state.setNextAttemptAt(Timestamps.format(nextAttemptAt));
        return state;
    }

    private static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }

    @Test
    void aNewDrainStartsAttemptOneNowForTheWholeTimeout() {
        Decision d = DrainSchedule.decide(options(300, 2, 30), new DrainState(), null, T0);
        assertThat(d.kind()).isEqualTo(Kind.WORK);
        assertThat(d.attempt()).isEqualTo(1);
        assertThat(d.attemptStartedAt()).isEqualTo(T0);
        assertThat(d.attemptEndsAt()).isEqualTo(at(300));
    }

    @ParameterizedTest(name = "timeoutSeconds {0} means {1} s")
    @CsvSource({"0, 300", "-5, 300", ", 300", "1, 1", "45, 45"})
    void timeoutsBelowOneMeanTheDefault(Integer timeout, int effective) {
        assertThat(DrainSchedule.decide(options(timeout, 0, 0), new DrainState(), null, T0).attemptEndsAt()).isEqualTo(at(effective));
    }

    @Test
    void theAttemptTimeoutIsCutToTheTimeLeftBeforeTheDeadline() {
        Decision d = DrainSchedule.decide(options(300, 2, 30), new DrainState(), at(40), T0);
        assertThat(d.attemptEndsAt()).isEqualTo(at(40));
        Decision resumed = DrainSchedule.decide(options(300, 2, 30), state(2, at(-100), null), at(40), at(10));
        assertThat(resumed.kind()).isEqualTo(Kind.WORK);
        assertThat(resumed.attemptEndsAt()).isEqualTo(at(40));
    }

    @Test
    void noAttemptStartsAtOrAfterTheDeadline() {
        assertThat(DrainSchedule.decide(options(300, 2, 30), new DrainState(), T0, T0).kind()).isEqualTo(Kind.GIVE_UP);
        Decision late = DrainSchedule.decide(options(300, 2, 30), state(1, at(-10), at(5)), at(5), at(6));
        assertThat(late.kind()).isEqualTo(Kind.GIVE_UP);
        assertThat(late.why()).contains("deadline").contains("has passed");
    }

    @Test
    void withinAnAttemptTheWorkGoesOn() {
        Decision d = DrainSchedule.decide(options(60, 2, 30), state(1, T0, null), null, at(59));
        assertThat(d.kind()).isEqualTo(Kind.WORK);
        assertThat(d.attempt()).isEqualTo(1);
        assertThat(d.attemptStartedAt()).as("the stored start, not now").isEqualTo(T0);
        assertThat(d.attemptEndsAt()).isEqualTo(at(60));
    }

    @Test
    void anEndedAttemptWaitsTheRetryIntervalBeforeTheNext() {
        Decision d = DrainSchedule.decide(options(60, 2, 30), state(1, T0, null), null, at(60));
        assertThat(d.kind()).isEqualTo(Kind.WAIT);
        assertThat(d.nextAttemptAt()).isEqualTo(at(90));
        DrainState stored = state(1, T0, null);
        d.applyTo(stored);
        assertThat(stored.getNextAttemptAt()).isEqualTo(Timestamps.format(at(90)));
        assertThat(stored.getAttemptStartedAt()).as("kept while waiting").isEqualTo(Timestamps.format(T0));

        Decision stillWaiting = DrainSchedule.decide(options(60, 2, 30), stored, null, at(89));
        assertThat(stillWaiting.kind()).isEqualTo(Kind.WAIT);
        assertThat(stillWaiting.nextAttemptAt()).isEqualTo(at(90));

        Decision second = DrainSchedule.decide(options(60, 2, 30), stored, null, at(91));
        assertThat(second.kind()).isEqualTo(Kind.WORK);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(second.attemptStartedAt()).isEqualTo(at(91));
        assertThat(second.attemptEndsAt()).isEqualTo(at(151));
        second.applyTo(stored);
        assertThat(stored.getNextAttemptAt()).isNull();
        assertThat(stored.getAttempt()).isEqualTo(2);
    }

    @Test
    void attemptsAreRetriesPlusOne() {
        assertThat(DrainSchedule.decide(options(60, 2, 30), state(2, T0, null), null, at(60)).kind()).isEqualTo(Kind.WAIT);
        Decision exhausted = DrainSchedule.decide(options(60, 2, 30), state(3, T0, null), null, at(60));
        assertThat(exhausted.kind()).isEqualTo(Kind.GIVE_UP);
        assertThat(exhausted.why()).isEqualTo("all 3 attempt(s) of 60s are used up");
        assertThat(DrainSchedule.decide(options(60, 0, 30), state(1, T0, null), null, at(60)).kind()).as("retries 0: one attempt").isEqualTo(Kind.GIVE_UP);
        assertThat(DrainSchedule.decide(options(60, null, 30), state(2, T0, null), null, at(60)).kind()).as("default retries 2").isEqualTo(Kind.WAIT);
    }

    @Test
    void noWaitEndsAtOrPastTheDeadline() {
        Decision d = DrainSchedule.decide(options(60, 2, 30), state(1, T0, null), at(90), at(60));
        assertThat(d.kind()).isEqualTo(Kind.GIVE_UP);
        assertThat(d.why()).contains("waiting 30s (retryIntervalSeconds) for attempt 2 would reach the operation's deadline");
        assertThat(DrainSchedule.decide(options(60, 2, 30), state(1, T0, null), at(91), at(60)).kind()).isEqualTo(Kind.WAIT);
    }

    @Test
    void aZeroRetryIntervalStartsTheNextAttemptAtOnce() {
        Decision d = DrainSchedule.decide(options(60, 1, 0), state(1, T0, null), null, at(61));
        assertThat(d.kind()).isEqualTo(Kind.WORK);
        assertThat(d.attempt()).isEqualTo(2);
        assertThat(d.attemptEndsAt()).isEqualTo(at(121));
    }

    @Test
    void aNegativeRetryIntervalMeansTheDefault() {
        assertThat(DrainSchedule.decide(options(60, 1, -1), state(1, T0, null), null, at(60)).nextAttemptAt()).isEqualTo(at(90));
    }

    @Test
    void aStateWithoutStartTimeStartsItsAttemptNow() {
        Decision d = DrainSchedule.decide(options(60, 1, 1), state(1, null, null), null, at(5));
        assertThat(d.kind()).isEqualTo(Kind.WORK);
        assertThat(d.attemptStartedAt()).isEqualTo(at(5));
    }

    @Test
    void giveUpClearsAPendingWait() {
        DrainState stored = state(1, T0, at(30));
        DrainSchedule.decide(options(10, 2, 30), stored, at(20), at(25)).applyTo(stored);
        assertThat(stored.getNextAttemptAt()).isNull();
        assertThat(stored.getAttempt()).isEqualTo(1);
    }
}
