package dev.cks.nodeops.operation;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.stream.Collectors;

/**
 * When an operation will be done, from what is left of its plan, how long its own finished nodes took, and its
 * maintenance window. Pure (docs/eta.md).
 *
 * <p>The plan is a list of stages run one after another (a NodeUpgrade's control-plane nodes one at a time, then
 * its workers up to maxUnavailable at once; a ScaleDown's drains one by one, then its removal). Within a stage a
 * node starts as soon as one of the stage's lanes is free and the window is open; nothing new starts in a closed
 * window, so a node that would start then starts at the next opening, and a node begun before the window closed
 * runs to its end (onClose FinishInProgress; StopAtSafeBoundary stops it sooner, which the estimate does not
 * model). A node of a kind this operation has finished before is taken to last as long as those did on average,
 * as this cluster's drains, Jobs and Ready waits go; of a kind it has not finished yet, its prior (the operator's
 * settings). A node in progress needs what is left of that; one already past it is late, and is given a tenth of
 * it more, looked at again at the next reconcile.
 */
public final class FinishEstimate {
    /**
     * A node (or a ScaleDown's removal) still to do.
     *
     * @param kind what kind of work it is; its duration is measured and prior by kind
     * @param startedAt when it began; null when it has not
     */
    public record Work(String kind, Instant startedAt) {
        public static Work pending(String kind) {
            return new Work(kind, null);
        }
    }

    /** Work this operation finished, and how long it took. */
    public record Finished(String kind, Duration took) {
    }

    /** Work done at most {@code lanes} at a time; the next stage starts when every node of this one is done. */
    public record Stage(List<Work> work, int lanes) {
    }

    /**
     * @param priors how long each kind of work is taken to last until this operation has measured it; every kind
     *        of {@code stages} has one
     */
    public record Plan(List<Stage> stages, List<Finished> finished, Map<String, Duration> priors) {
    }

    /**
     * @param finish when the last of the plan is done
     * @param basis what it rests on, for users: each kind's duration and whether it was measured or prior
     * @param measured whether every kind still to do has a measured duration
     */
    public record Estimate(Instant finish, String basis, boolean measured) {
    }

    /** How much of its expected duration a late node is still given. */
    private static final int LATE_FRACTION = 10;

    private FinishEstimate() {
    }

    /** @return empty when the window cannot be read (nothing starts until it is fixed) or nothing is left to do */
    public static Optional<Estimate> of(Plan plan, MaintenanceWindow window, Instant now) {
        List<Work> left = plan.stages().stream().flatMap(s -> s.work().stream()).toList();
        if (left.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Duration> expected = new LinkedHashMap<>();
        Map<String, Integer> samples = new LinkedHashMap<>();
        for (Work work : left) {
            List<Duration> measured = plan.finished().stream().filter(f -> f.kind().equals(work.kind())).map(Finished::took).toList();
            samples.put(work.kind(), measured.size());
            expected.put(work.kind(), measured.isEmpty() ? prior(plan, work.kind())
                    : measured.stream().reduce(Duration.ZERO, Duration::plus).dividedBy(measured.size()));
        }
        Instant stageStart = now;
        try {
            for (Stage stage : plan.stages()) {
                stageStart = stageEnd(stage, expected, window, stageStart, now);
            }
        } catch (WindowSchedule.Unreadable unreadable) {
            return Optional.empty();
        }
        boolean allMeasured = samples.values().stream().allMatch(n -> n > 0);
        return Optional.of(new Estimate(stageStart, basis(left, expected, samples), allMeasured));
    }

    private static Duration prior(Plan plan, String kind) {
        Duration prior = plan.priors().get(kind);
        if (prior == null) {
            throw new IllegalArgumentException("no prior duration for work of kind " + kind);
        }
        return prior;
    }

    /** Lanes free at a time; work in progress holds a lane until its expected end, pending work takes the first lane free in an open window. */
    private static Instant stageEnd(Stage stage, Map<String, Duration> expected, MaintenanceWindow window, Instant stageStart, Instant now)
            throws WindowSchedule.Unreadable {
        PriorityQueue<Instant> lanes = new PriorityQueue<>();
        for (int i = 0; i < Math.max(1, stage.lanes()); i++) {
            lanes.add(stageStart);
        }
        Instant end = stageStart;
        List<Work> ordered = new ArrayList<>(stage.work().stream().filter(w -> w.startedAt() != null).toList());
        ordered.addAll(stage.work().stream().filter(w -> w.startedAt() == null).toList());
        for (Work work : ordered) {
            Duration duration = expected.get(work.kind());
            Instant free = lanes.isEmpty() ? stageStart : lanes.poll();
            Instant done;
            if (work.startedAt() != null) {
                Instant due = work.startedAt().plus(duration);
                Instant late = now.plus(duration.dividedBy(LATE_FRACTION));
                done = due.isAfter(now) ? due : late;
            } else {
                done = opening(window, free).plus(duration);
            }
            lanes.add(done);
            end = done.isAfter(end) ? done : end;
        }
        return end;
    }

    /** The first instant from {@code at} on when new work may start. */
    private static Instant opening(MaintenanceWindow window, Instant at) throws WindowSchedule.Unreadable {
        Optional<WindowSchedule.Position> position = WindowSchedule.at(window, at);
        return position.isEmpty() || position.get().open() ? at : position.get().opensAt();
    }

    private static String basis(List<Work> left, Map<String, Duration> expected, Map<String, Integer> samples) {
        String kinds = expected.entrySet().stream().map(e -> {
            int n = samples.get(e.getKey());
            return e.getKey() + " " + describe(e.getValue()) + " a node, " + (n == 0 ? "prior" : "measured: the mean of " + n + " finished here");
        }).collect(Collectors.joining("; "));
        return left.size() + " left; " + kinds;
    }

    /** A duration as users read it: 12 min 30 s. */
    public static String describe(Duration duration) {
        long minutes = duration.toMinutes();
        long seconds = duration.minusMinutes(minutes).getSeconds();
        return minutes == 0 ? seconds + " s" : seconds == 0 ? minutes + " min" : minutes + " min " + seconds + " s";
    }
}
