package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.Optional;

import dev.cks.nodeops.drain.Preflight;

/**
 * Before anything is cordoned: whether the operation's estimated finish is inside the maintenance window it starts
 * in, and what spec.preflight says to do when it is not (Fail refuses, Warn goes on and says so, Skip does not look).
 * Pure. A run that does not fit still finishes, over several windows: what is left when the window closes waits for
 * the next opening. Refusing up front is for those who would rather not have a rollout half done over a weekend.
 */
public final class WindowFit {
    /** The condition (True: the estimate is past the window's end) and the Warning event of a run that goes on anyway. */
    public static final String WINDOW_TOO_SHORT = "WindowTooShort";

    public sealed interface Verdict {
    }

    /**
     * Go on.
     *
     * @param message what the {@value #WINDOW_TOO_SHORT} condition says; null without a window or an estimate
     * @param warn the estimate is past the window's end and spec.preflight is Warn
     */
    public record Proceed(String message, boolean warn) implements Verdict {
    }

    /** Do not start: nothing has been touched. */
    public record Refuse(String message) implements Verdict {
    }

    private WindowFit() {
    }

    /** @param what the operation as users name it, e.g. "NodeUpgrade to-1-35" */
    public static Verdict check(Optional<FinishEstimate.Estimate> estimate, MaintenanceWindow window, Preflight policy, String what, Instant now) {
        if (policy == Preflight.Skip || estimate.isEmpty()) {
            return new Proceed(null, false);
        }
        Optional<WindowSchedule.Position> position;
        try {
            position = WindowSchedule.at(window, now);
        } catch (WindowSchedule.Unreadable unreadable) {
            // The work gate holds the operation and says why; no estimate can be made against a window that cannot be read.
            return new Proceed(null, false);
        }
        if (position.isEmpty()) {
            return new Proceed(null, false);
        }
        FinishEstimate.Estimate finish = estimate.get();
        WindowSchedule.Position starts = position.get();
        String first = starts.open() ? "the window open now, which closes on " + starts.describeClosing()
                : "the next window, from " + starts.describeOpening() + " to " + starts.describeClosing();
        String estimated = what + " is estimated to finish at " + finish.finish() + " (" + finish.basis() + ")";
        if (!finish.finish().isAfter(starts.closesAt())) {
            return new Proceed(estimated + ", inside " + first + ".", false);
        }
        String tooShort = estimated + ", after the end of " + first + ".";
        if (policy == Preflight.Fail) {
            return new Refuse(tooShort + "\nNothing was cordoned. Widen spec.window, select fewer nodes (or raise spec.maxUnavailable), "
                    + "or set spec.preflight: Warn to let it go on over several windows; then create it again.");
        }
        return new Proceed(tooShort + " spec.preflight is Warn: it goes on, and what is left when the window closes waits for the next opening.", true);
    }
}
