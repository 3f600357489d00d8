package dev.cks.nodeops.testing;

import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.cks.nodeops.operation.KillPoint;
import io.fabric8.kubernetes.client.CustomResource;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * One kill point armed for reconcilers running in the test's JVM: the reconcile that reaches it ends
 * right there, as a halted operator would (nothing after the side effect is written, the status JOSDK
 * would patch is lost), and the test's restart starts a new reconciler from the status the API server
 * holds ({@link RecordingStatusStore#durable}). Everything else (nodes, CloudStack, Jobs) stays as the
 * side effect left it.
 */
public final class Crash implements AutoCloseable {
    /**
     * The JVM's one armed point ({@link KillPoint#armInProcess}) as a JUnit resource: a test that arms one locks it, tests
     * that run in parallel read it, so that none of them reaches a point armed for another.
     */
    public static final String ARMED_POINT = "in-process kill point";

    /** Thrown at the armed point; an Error, so no catch of the code under test can swallow it. */
    public static final class Halted extends Error {
        Halted(KillPoint point) {
            super("halted at kill point " + point.pointName(), null, false, false);
        }
    }

    private final KillPoint point;
    private final AutoCloseable armed;
    private int crashes;

    private Crash(KillPoint point, int nth) {
        this.point = point;
        this.armed = KillPoint.armInProcess(point, nth, () -> {
            throw new Halted(point);
        });
    }

    /** Halts the n-th time the point is reached (1 = the first). */
    public static Crash at(KillPoint point, int nth) {
        return new Crash(point, nth);
    }

    public KillPoint point() {
        return point;
    }

    /** Whether the point was reached and the operator halted there. */
    public boolean happened() {
        return crashes > 0;
    }

    /**
     * One reconcile as JOSDK runs it in a process that may halt: on success the status is patched; at the
     * kill point the resource gets the status the API server holds and {@code restart} builds a new reconciler.
     */
    public <R extends CustomResource<?, S>, S> UpdateControl<R> reconcile(R resource, Function<R, UpdateControl<R>> reconcile,
            RecordingStatusStore store, Class<S> statusType, Runnable restart) {
        Optional<UpdateControl<R>> control = call(() -> {
            UpdateControl<R> done = reconcile.apply(resource);
            store.patched(resource);
            return done;
        }, () -> {
            resource.setStatus(store.durable(statusType));
            restart.run();
        });
        // A new process lists the resource and reconciles it at once.
        return control.orElseGet(() -> UpdateControl.<R>noUpdate().rescheduleAfter(0));
    }

    /** One call into the operator (a reconcile, a cleanup): its result, or empty when it halted and {@code restart} ran. */
    public <T> Optional<T> call(Supplier<T> call, Runnable restart) {
        try {
            return Optional.of(call.get());
        } catch (Halted halted) {
            crashes++;
            restart.run();
            return Optional.empty();
        }
    }

    @Override
    public void close() throws Exception {
        armed.close();
    }
}
