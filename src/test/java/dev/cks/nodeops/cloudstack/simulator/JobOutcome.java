package dev.cks.nodeops.cloudstack.simulator;

/** How the next async job of a command ends; queued with {@link CloudStackSimulator#planJob}. */
public sealed interface JobOutcome {

    /** Succeeds on the given poll of queryAsyncJobResult (1 = the first poll already sees it done). */
    record SucceedsAfterPolls(int polls) implements JobOutcome {
    }

    /** Fails on the given poll with this error; the command's effect is not applied. */
    record FailsAfterPolls(int polls, int errorCode, String errorText) implements JobOutcome {
    }

    /** Succeeds once this much time has passed on the simulator's clock, at the next request of any kind (polled or not). */
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

    /** Runs at once, as CloudStack's executor would, whether or not anybody polls it. */
    static JobOutcome runsAtOnce() {
        return new SucceedsAfter(java.time.Duration.ZERO);
    }

    static JobOutcome succeedsAfterPolls(int polls) {
        return new SucceedsAfterPolls(polls);
    }
}
