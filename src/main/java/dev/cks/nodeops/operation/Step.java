package dev.cks.nodeops.operation;

import java.time.Duration;
import java.time.Instant;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * What a reconcile of an operation asks for after its step: to be called again after a delay, or
 * nothing more because the operation has finished. Waiting for a watched event is a delay too: the
 * event wakes the reconciler first, the delay only catches an event that was missed.
 *
 * @param after null when the operation has finished
 */
public record Step(Duration after) {
    /** The next step is due now; the short delay lets this step's status patch land first. */
    public static final Duration SOON = Duration.ofMillis(200);
    /** The safety net of a step that waits for a watched event (a Node, a Job). */
    public static final Duration EVENT_SAFETY_NET = Duration.ofSeconds(30);

    public static Step next() {
        return new Step(SOON);
    }

    /** After this long, and never sooner than {@link #SOON}. */
    public static Step after(Duration delay) {
        return new Step(delay.compareTo(SOON) < 0 ? SOON : delay);
    }

    /** When something is due: a drain's next look, a deadline, the end of a wait. */
    public static Step at(Instant due, Instant now) {
        return after(Duration.between(now, due));
    }

    /** A watched event wakes the operation; {@link #EVENT_SAFETY_NET} only catches a missed one. */
    public static Step onEvent() {
        return new Step(EVENT_SAFETY_NET);
    }

    public static Step finished() {
        return new Step(null);
    }

    /** Of the steps of several nodes worked on at once, the one due first; finished only when all are. */
    public static Step soonest(java.util.List<Step> steps) {
        return steps.stream().filter(s -> !s.isFinished()).min(java.util.Comparator.comparing(Step::after)).orElse(finished());
    }

    public boolean isFinished() {
        return after == null;
    }

    /** The status is patched in every case: a step always changes it or re-asserts it. */
    public <R extends HasMetadata> UpdateControl<R> toControl(R resource) {
        UpdateControl<R> control = UpdateControl.patchStatus(resource);
        return isFinished() ? control : control.rescheduleAfter(after);
    }
}
