package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.List;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.PodSelector;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.drain.PreflightPrediction;

/** Before anything is cordoned: what the drains would run into, and whether the operation may start (spec.preflight). */
public final class PreflightGate {
    /** The condition both kinds set from the prediction. */
    public static final String CONDITION = "PreflightPredictsBlock";

    public sealed interface Verdict {
    }

    /**
     * Go on.
     *
     * @param prediction null when no preflight ran (Skip, or no node to drain)
     * @param warn a block is predicted and spec.preflight is Warn
     */
    public record Proceed(PreflightPrediction.Report prediction, boolean warn) implements Verdict {
    }

    /** Do not start: nothing has been touched. */
    public record Refuse(String message) implements Verdict {
    }

    private PreflightGate() {
    }

    public static Verdict check(NodeWork work, List<String> nodes, Draining draining, DrainOptions options, Preflight policy, Instant now) {
        if (policy == Preflight.Skip || nodes.isEmpty()) {
            return new Proceed(null, false);
        }
        PreflightPrediction.Report prediction;
        try {
            prediction = work.preflight(nodes, draining, options, now);
        } catch (PodSelector.InvalidSelector invalid) {
            return new Refuse(invalid.getMessage() + " Fix spec.drain.podSelector; nothing was cordoned.");
        }
        if (!prediction.predictsBlock()) {
            return new Proceed(prediction, false);
        }
        if (policy == Preflight.Fail) {
            return new Refuse(prediction.describe() + "\nNothing was cordoned. Free what blocks (or set spec.preflight: Warn to try anyway), "
                    + "then try again.");
        }
        return new Proceed(prediction, true);
    }
}
