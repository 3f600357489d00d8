package dev.cks.nodeops.cloudstack.simulator;

/**
 * How the next async job of a command ends; queued with {@link CloudStackSimulator#planJob}. A job runs
 * to its end whether or not anyone polls it, as CloudStack's job executor does: one that ends at its
 * first poll has ended before anyone could look, one planned by a duration ends when the simulator's
 * clock gets there. Only an outcome planned by a later poll (a test that wants to see the job pending)
 * waits for queryAsyncJobResult.
 */
public sealed interface JobOutcome {

    /** Succeeds on the given poll of queryAsyncJobResult (1 = it has ended before anyone polls). */
    record SucceedsAfterPolls(int polls) implements JobOutcome {
    }

    /** Fails on the given poll with this error (1 = before anyone polls); the command's effect is not applied. */
    record FailsAfterPolls(int polls, int errorCode, String errorText) implements JobOutcome {
    }

    /** Succeeds once this much time has passed on the simulator's clock, seen by the first request after it. */
    record SucceedsAfter(java.time.Duration duration) implements JobOutcome {
    }

    /** Stays pending forever. */
    record NeverFinishes() implements JobOutcome {
    }

    static JobOutcome fails(int errorCode, String errorText) {
        return new FailsAfterPolls(1, errorCode, errorText);
    }

    static JobOutcome neverFinishes() {
        return new NeverFinishes();
    }

    static JobOutcome succeedsAfterPolls(int polls) {
        return new SucceedsAfterPolls(polls);
    }
}
