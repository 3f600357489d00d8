package dev.cks.nodeops.testing;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.cks.nodeops.cloudstack.ManualTime;
import io.fabric8.kubernetes.client.CustomResource;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * Calls a reconciler as JOSDK would, without a cluster: again and again on the same resource, moving
 * the clock by the delay each reconcile asked for, until the status shows what the test waits for.
 */
public final class ReconcileLoop<R extends CustomResource<?, S>, S> {
    private static final int MAX_RECONCILES = 300;

    private final Function<R, UpdateControl<R>> reconcile;
    private final ManualTime clock;
    private final Runnable between;
    private final Supplier<String> describe;

    /**
     * @param between what the world does while the operator waits (e.g. a kubelet coming back)
     * @param describe the state to show when the wait fails
     */
    public ReconcileLoop(Function<R, UpdateControl<R>> reconcile, ManualTime clock, Runnable between, Supplier<String> describe) {
        this.reconcile = reconcile;
        this.clock = clock;
        this.between = between;
        this.describe = describe;
    }

    public S until(R resource, String what, Predicate<S> until) {
        for (int i = 0; i < MAX_RECONCILES; i++) {
            UpdateControl<R> control = reconcile.apply(resource);
            if (until.test(resource.getStatus())) {
                return resource.getStatus();
            }
            if (control.getScheduleDelay().isEmpty()) {
                throw new AssertionError("the operation stopped before " + what + ": " + describe.get());
            }
            clock.advance(Duration.ofMillis(control.getScheduleDelay().get()));
            between.run();
        }
        throw new AssertionError("not " + what + " after " + MAX_RECONCILES + " reconciles: " + describe.get());
    }
}
