package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Plays the reconciler of a drain with watches: a step runs when the drain's watches wake it, or at the
 * step's next check if no wake-up comes first. Wake-ups during a step are folded into one next step, as
 * JOSDK folds events that arrive while a resource is being reconciled.
 */
final class WokenSteps {
    private final Semaphore wakes = new Semaphore(0);
    /** How many times the watches woke the drain. */
    final AtomicInteger wokenBy = new AtomicInteger();
    /** How many steps ran. */
    final AtomicInteger steps = new AtomicInteger();

    private void wake() {
        wokenBy.incrementAndGet();
        wakes.release();
    }

    DrainResult toEnd(NodeDrainer drainer, String node, DrainOptions options, DrainState state, Duration limit) throws InterruptedException {
        Instant giveUp = Instant.now().plus(limit);
        steps.incrementAndGet();
        DrainResult result = drainer.step(node, options, state, null, Instant.now(), this::wake);
        while (!result.finished()) {
            assertThat(Instant.now()).as("the drain of %s finishes within %s; last report:\n%s", node, limit, result.report()).isBefore(giveUp);
            long waitMillis = Math.max(0, Duration.between(Instant.now(), result.nextCheckAt()).toMillis());
            if (wakes.tryAcquire(waitMillis, TimeUnit.MILLISECONDS)) {
                wakes.drainPermits();
            }
            steps.incrementAndGet();
            result = drainer.step(node, options, result.state(), null, Instant.now(), this::wake);
        }
        return result;
    }
}
