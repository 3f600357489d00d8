package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.Optional;

/**
 * Whether an operation may work now, from the two fields users change while it runs: {@code spec.paused}
 * and {@code spec.window}. Pure. New work (the next node, the start of the operation, a removal) needs
 * the window open; work in progress goes on after the window closes unless the window says
 * StopAtSafeBoundary. Paused stops both at the next safe boundary.
 */
public final class WorkGate {
    public static final String PAUSED = "Paused";
    public static final String OUTSIDE_WINDOW = "OutsideWindow";
    public static final String INVALID_WINDOW = "InvalidWindow";

    public enum Work {
        /** Something not yet begun: the operation's start, the next node, a removal. */
        NEW,
        /** Work on a node already begun, at one of its safe boundaries (between drain steps, before its upgrade Job). */
        IN_PROGRESS
    }

    public sealed interface Verdict {
        /** Where the window stands now; empty when the operation has no window (or it cannot be read). */
        Optional<WindowSchedule.Position> window();
    }

    public record Go(Optional<WindowSchedule.Position> window) implements Verdict {
    }

    /**
     * Not now.
     *
     * @param reason {@value #PAUSED}, {@value #OUTSIDE_WINDOW} or {@value #INVALID_WINDOW}
     * @param until when the hold ends by itself (the window opens); null when only a change of the spec ends it
     */
    public record Hold(String reason, String message, Instant until, Optional<WindowSchedule.Position> window) implements Verdict {
        public Step step(Instant now) {
            return until == null ? Step.onEvent() : Step.at(until, now);
        }
    }

    private WorkGate() {
    }

    public static Verdict check(Boolean paused, MaintenanceWindow window, Work work, Instant now) {
        Optional<WindowSchedule.Position> position;
        try {
            position = WindowSchedule.at(window, now);
        } catch (WindowSchedule.Unreadable unreadable) {
            return new Hold(INVALID_WINDOW, unreadable.getMessage(), null, Optional.empty());
        }
        if (Boolean.TRUE.equals(paused)) {
            return new Hold(PAUSED, "spec.paused is true: the operation stopped at a safe boundary and goes on when spec.paused is set to false.",
                    null, position);
        }
        if (position.isEmpty() || position.get().open()) {
            return new Go(position);
        }
        if (work == Work.IN_PROGRESS && window.getOnClose() != MaintenanceWindow.OnClose.StopAtSafeBoundary) {
            return new Go(position);
        }
        return new Hold(OUTSIDE_WINDOW, "Outside the maintenance window: nothing " + (work == Work.NEW ? "new starts" : "goes on")
                + " until it opens on " + position.get().describeOpening() + ".", position.get().opensAt(), position);
    }
}
