package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

/**
 * The one writer of what users see of a node operation, one per kind: conditions, the phase of the
 * kit's stages, the one-line message, events and metrics. Every acceptance, refusal, wait, drain tick
 * and end of an operation goes through here, so ScaleDown and NodeUpgrade say the same things the
 * same way (docs/architecture.md lists the decisions).
 */
public final class OperationRecorder {
    /**
     * Event reasons both kinds use; the end of an operation is announced under its final phase (Succeeded, RolledBack, Failed),
     * and a wait under its own reason, the Waiting condition's (OutsideWindow, MaxUnavailable, CloudStackUnavailable, …).
     */
    public static final String ACCEPTED = "Accepted";
    public static final String REFUSED = "Refused";
    public static final String INVALID_SPEC = "InvalidSpec";
    public static final String RETRYING = "Retrying";
    public static final String CORDONED = "Cordoned";
    public static final String DRAINING = "Draining";
    public static final String NODE_DRAINED = "NodeDrained";
    public static final String DRAIN_BLOCKED = "DrainBlocked";
    public static final String PODS_DELETED = "PodsDeleted";
    public static final String UNCORDONED = "Uncordoned";
    public static final String PAUSED = "Paused";
    public static final String RESUMED = "Resumed";
    public static final String HOLDING = "Holding";
    public static final String CORRECTING = "Correcting";

    private final String kind;
    private final EventRecorder events;
    private final OperationMetrics metrics;

    public OperationRecorder(String kind, EventRecorder events, OperationMetrics metrics) {
        this.kind = kind;
        this.events = events;
        this.metrics = metrics;
    }

    public String kind() {
        return kind;
    }

    /**
     * One reconcile of an operation: a spec with problems (rules the schema cannot express) is refused
     * like any other refusal, else it is {@code Accepted=True} (reason {@code Valid}, until planning says
     * {@code Planned} or refuses) and the kind's step runs.
     */
    public <R extends CustomResource<?, ? extends NodeOperationStatus>> UpdateControl<R> step(R resource, List<String> problems, Instant now,
            Supplier<Step> step) {
        resource.getStatus().setObservedGeneration(resource.getMetadata().getGeneration());
        Step next;
        if (problems.isEmpty()) {
            if (Conditions.find(resource.getStatus().getConditions(), Conditions.ACCEPTED).isEmpty()) {
                // Valid until planning accepts it (reason Planned, with an event) or refuses it.
                Conditions.set(resource.getStatus().getConditions(), Conditions.ACCEPTED, true, "Valid", "The spec is valid; the operation is planned next.",
                        generation(resource), now);
            }
            next = step.get();
            resource.getStatus().trimDrainHistory();
        } else {
            invalid(resource, String.join("; ", problems), now);
            next = Step.finished();
        }
        return next.toControl(resource);
    }

    /** The spec breaks a rule the schema cannot express: refused like any other refusal. */
    public void invalid(CustomResource<?, ? extends NodeOperationStatus> resource, String problems, Instant now) {
        refused(resource, INVALID_SPEC, problems, now);
    }

    /** Refused before anything was touched: {@code Accepted=False}, phase Failed. */
    public void refused(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, reason, message, generation(resource), now);
        if (Conditions.find(status.getConditions(), Conditions.PROGRESSING).isPresent()) {
            Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, reason, firstLine(message), generation(resource), now);
        }
        end(resource, Stage.FAILED, message, now);
        events.warning(resource, reason, message);
    }

    /** The operation may go ahead; the event is sent once, when acceptance is new. */
    public void accepted(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        boolean already = Conditions.find(status.getConditions(), Conditions.ACCEPTED)
                .map(c -> "True".equals(c.getStatus()) && reason.equals(c.getReason())).orElse(false);
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, reason, message, generation(resource), now);
        if (!already) {
            events.normal(resource, ACCEPTED, message);
        }
    }

    /** Work goes on; a wait that was under way ends (the Waiting condition is removed). */
    public void progressing(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, true, reason, message, generation(resource), now);
        status.setMessage(firstLine(message));
        if (Conditions.find(status.getConditions(), Conditions.WAITING).isPresent()) {
            Conditions.remove(status.getConditions(), Conditions.WAITING);
            status.enter(Stage.RUNNING);
        }
    }

    /**
     * Nothing can be done now: an event under the wait's reason when the reason is new, not on every look;
     * a Warning for keys CloudStack rejects, which only a person can fix, else Normal.
     */
    public void waiting(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        if (setWaiting(resource, reason, message, now)) {
            if (reason.equals(CloudStackWait.CREDENTIALS_REJECTED)) {
                events.warning(resource, reason, message);
            } else {
                events.normal(resource, reason, message);
            }
        }
        status.enter(Stage.WAITING);
    }

    /**
     * A step failed with an exception (the API server gone, a bug) and JOSDK retries it with backoff: the
     * error is in status while it lasts (the phase stays), and a Warning event marks where such a streak begins.
     */
    public <R extends CustomResource<?, ? extends NodeOperationStatus>> ErrorStatusUpdateControl<R> retrying(R resource, Exception error,
            Instant now) {
        if (resource.getStatus() == null || isConflict(error)) {
            // A conflict is no failure to report: the status changed since this reconcile read it (AppliedStatusStore),
            // and its retry reads it again and decides anew; a status written from what this one read would conflict too.
            return ErrorStatusUpdateControl.noStatusUpdate();
        }
        String message = BlockedByReport.tail("The last step failed and is tried again with backoff: " + error.getMessage());
        if (setWaiting(resource, RETRYING, message, now)) {
            events.warning(resource, RETRYING, message);
        }
        return ErrorStatusUpdateControl.patchStatus(resource);
    }

    private static boolean isConflict(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof KubernetesClientException kubernetes && kubernetes.getCode() == java.net.HttpURLConnection.HTTP_CONFLICT) {
                return true;
            }
        }
        return false;
    }

    private boolean setWaiting(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        boolean newReason = Conditions.find(status.getConditions(), Conditions.WAITING).map(c -> !reason.equals(c.getReason())).orElse(true);
        Conditions.set(status.getConditions(), Conditions.WAITING, true, reason, message, generation(resource), now);
        status.setMessage(firstLine(message));
        return newReason;
    }

    /**
     * The end of the operation: its final phase, the terminal condition, Progressing=False, no Waiting,
     * an event (Normal for Succeeded, Warning otherwise) and the outcome counted once.
     */
    public void finished(CustomResource<?, ? extends NodeOperationStatus> resource, Stage stage, String conditionType, String reason,
            String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        Conditions.set(status.getConditions(), conditionType, true, reason, message, generation(resource), now);
        end(resource, stage, message, now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, status.phaseName(), firstLine(message), generation(resource), now);
        if (stage == Stage.SUCCEEDED) {
            events.normal(resource, status.phaseName(), message);
        } else {
            events.warning(resource, status.phaseName(), message);
        }
    }

    private void end(CustomResource<?, ? extends NodeOperationStatus> resource, Stage stage, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        status.enter(stage);
        status.setCompletedAt(Timestamps.format(now));
        status.setCurrentNode(null);
        status.setMessage(firstLine(message));
        estimate(resource, Optional.empty());
        metrics.finished(kind, status.phaseName());
    }

    /**
     * Done with every node, and watching for one that falls below the target again (a Continuous NodeUpgrade):
     * {@code Holding=True}, Progressing=False, no Waiting, and an event when it begins to hold. Nothing is counted as
     * finished: it has not ended.
     */
    public void holding(CustomResource<?, ? extends NodeOperationStatus> resource, String message, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        boolean already = Conditions.isTrue(status.getConditions(), Conditions.HOLDING);
        Conditions.set(status.getConditions(), Conditions.HOLDING, true, "AtTarget", message, generation(resource), now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, false, HOLDING, firstLine(message), generation(resource), now);
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        status.enter(Stage.HOLDING);
        status.setCurrentNode(null);
        status.setMessage(firstLine(message));
        estimate(resource, Optional.empty());
        if (!already) {
            events.normal(resource, HOLDING, message);
        }
    }

    /** A held operation found a node below its target: it works again ({@code Holding=False}), with an event per node. */
    public void correcting(CustomResource<?, ? extends NodeOperationStatus> resource, List<String> messages, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        String message = String.join(" ", messages);
        Conditions.set(status.getConditions(), Conditions.HOLDING, false, CORRECTING, message, generation(resource), now);
        Conditions.set(status.getConditions(), Conditions.PROGRESSING, true, CORRECTING, message, generation(resource), now);
        Conditions.remove(status.getConditions(), Conditions.WAITING);
        status.enter(Stage.RUNNING);
        status.setMessage(firstLine(message));
        messages.forEach(each -> events.normal(resource, CORRECTING, each));
    }

    /**
     * A drain step of one node: the progress line (with the budgets holding pods and their numbers) in
     * Progressing and the message, and the escalation ladder's steps taken now:
     * a Warn is a Warning event and the {@value Conditions#DRAIN_BLOCKED} condition naming the budgets and
     * pods (by default when the drain becomes blocked, once per cause); deleted pods a Warning event.
     * (The drain-blocked metric is read from the same status, see {@code monitoring.StatusMetrics}.)
     */
    public void drainTick(CustomResource<?, ? extends NodeOperationStatus> resource, String node, DrainTick tick, Instant now) {
        if (tick.outcome() == DrainResult.Outcome.IN_PROGRESS && tick.giveUp().isEmpty()) {
            progressing(resource, DRAINING, tick.progress(), now);
        }
        for (String warning : tick.warnings()) {
            nodeWarning(resource, node, DRAIN_BLOCKED, warning);
            Conditions.set(resource.getStatus().getConditions(), Conditions.DRAIN_BLOCKED, true, "BudgetsHoldPods", warning, generation(resource), now);
        }
        if (!tick.deleted().isEmpty()) {
            nodeWarning(resource, node, PODS_DELETED, "Deleted pods held on node " + node + " by their budgets, as spec.drain.escalation opted them in: "
                    + tick.deleted());
        }
        if (!tick.blocked()) {
            drainUnblocked(resource, node);
        }
    }

    /** The node's drain is over (finished, rolled back, released): its DrainBlocked condition goes. */
    public void drainOver(CustomResource<?, ? extends NodeOperationStatus> resource, String node) {
        drainUnblocked(resource, node);
    }

    private static void drainUnblocked(CustomResource<?, ? extends NodeOperationStatus> resource, String node) {
        if (Conditions.find(resource.getStatus().getConditions(), Conditions.DRAIN_BLOCKED)
                .map(c -> c.getMessage().contains("node " + node + " ")).orElse(false)) {
            Conditions.remove(resource.getStatus().getConditions(), Conditions.DRAIN_BLOCKED);
        }
    }

    /** Where the window stands, in status.window (for `kubectl get`'s Next Window column). */
    public void window(CustomResource<?, ? extends NodeOperationStatus> resource, WorkGate.Verdict gate) {
        resource.getStatus().setWindow(gate.window().map(position -> {
            NodeOperationStatus.WindowStatus window = new NodeOperationStatus.WindowStatus();
            window.setState(position.open() ? NodeOperationStatus.WindowStatus.State.Open : NodeOperationStatus.WindowStatus.State.Closed);
            window.setOpensAt(Timestamps.format(position.opensAt()));
            window.setClosesAt(Timestamps.format(position.closesAt()));
            return window;
        }).orElse(null));
    }

    /**
     * Held by spec.paused or the window with no node worked on: Waiting with the reason, Paused=True when
     * paused (with a Normal event once), and the time it began, which the deadline does not count.
     */
    public void held(CustomResource<?, ? extends NodeOperationStatus> resource, WorkGate.Hold hold, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        if (hold.reason().equals(WorkGate.PAUSED)) {
            boolean already = Conditions.isTrue(status.getConditions(), Conditions.PAUSED);
            Conditions.set(status.getConditions(), Conditions.PAUSED, true, PAUSED, hold.message(), generation(resource), now);
            if (!already) {
                events.normal(resource, PAUSED, hold.message());
            }
        }
        // A pause has its own event; other holds get one under their reason when it is new.
        if (setWaiting(resource, hold.reason(), hold.message(), now) && !hold.reason().equals(WorkGate.PAUSED)) {
            events.normal(resource, hold.reason(), hold.message());
        }
        status.enter(Stage.WAITING);
        if (status.getHeldSince() == null) {
            status.setHeldSince(Timestamps.format(now));
        }
    }

    /** spec.paused is set but work in progress has not reached a safe boundary yet. */
    public void pausing(CustomResource<?, ? extends NodeOperationStatus> resource, String message, Instant now) {
        Conditions.set(resource.getStatus().getConditions(), Conditions.PAUSED, false, "Pausing", message, generation(resource), now);
    }

    /**
     * Work goes on, not paused: a Paused condition goes (with a Resumed event when it had stopped), and after
     * a hold the deadline and the given drains' clocks move on by the time held, so a pause or a closed
     * window never uses up an operation's time.
     */
    public void resumed(CustomResource<?, ? extends NodeOperationStatus> resource, List<DrainState> drains, Instant now) {
        NodeOperationStatus status = resource.getStatus();
        if (Conditions.isTrue(status.getConditions(), Conditions.PAUSED)) {
            events.normal(resource, RESUMED, "spec.paused is false: the operation goes on.");
        }
        Conditions.remove(status.getConditions(), Conditions.PAUSED);
        Instant since = Timestamps.parse(status.getHeldSince());
        status.setHeldSince(null);
        if (since == null) {
            return;
        }
        java.time.Duration held = java.time.Duration.between(since, now);
        Instant deadline = Timestamps.parse(status.getDeadline());
        if (deadline != null) {
            status.setDeadline(Timestamps.format(deadline.plus(held)));
        }
        drains.stream().filter(java.util.Objects::nonNull).forEach(drain -> drain.resumeAfter(held));
    }

    /** The preflight's prediction as the {@value PreflightGate#CONDITION} condition, and a Warning event when a block is predicted. */
    public void preflight(CustomResource<?, ? extends NodeOperationStatus> resource, PreflightGate.Proceed verdict, Instant now) {
        if (verdict.prediction() == null) {
            return;
        }
        String described = verdict.prediction().describe();
        Conditions.set(resource.getStatus().getConditions(), PreflightGate.CONDITION, verdict.warn(),
                verdict.warn() ? "BlockPredicted" : "NoBlockPredicted", described, generation(resource), now);
        if (verdict.warn()) {
            events.warning(resource, PreflightGate.CONDITION, described + "\nspec.preflight is Warn: the operation goes on.");
        }
    }

    /** When the operation is estimated to be done, and on what that rests (for `kubectl get`'s ETA column); none clears both. */
    public void estimate(CustomResource<?, ? extends NodeOperationStatus> resource, Optional<FinishEstimate.Estimate> estimate) {
        NodeOperationStatus status = resource.getStatus();
        status.setEstimatedFinish(estimate.map(e -> Timestamps.format(e.finish())).orElse(null));
        status.setEstimateBasis(estimate.map(FinishEstimate.Estimate::basis).orElse(null));
    }

    /**
     * Whether the estimate fits the window the operation starts in, as the {@value WindowFit#WINDOW_TOO_SHORT} condition (none without a
     * window or an estimate), and a Warning event when it does not and spec.preflight is Warn.
     */
    public void windowFit(CustomResource<?, ? extends NodeOperationStatus> resource, WindowFit.Proceed verdict, Instant now) {
        if (verdict.message() == null) {
            Conditions.remove(resource.getStatus().getConditions(), WindowFit.WINDOW_TOO_SHORT);
            return;
        }
        Conditions.set(resource.getStatus().getConditions(), WindowFit.WINDOW_TOO_SHORT, verdict.warn(),
                verdict.warn() ? "EstimatePastWindow" : "EstimateInsideWindow", verdict.message(), generation(resource), now);
        if (verdict.warn()) {
            events.warning(resource, WindowFit.WINDOW_TOO_SHORT, verdict.message());
        }
    }

    /** A condition about something besides the operation's own course (True, False, or Unknown for null). */
    public void condition(CustomResource<?, ? extends NodeOperationStatus> resource, String type, Boolean status, String reason, String message,
            Instant now) {
        List<Condition> conditions = resource.getStatus().getConditions();
        if (status == null) {
            Conditions.setUnknown(conditions, type, reason, message, generation(resource), now);
        } else {
            Conditions.set(conditions, type, status, reason, message, generation(resource), now);
        }
    }

    /** What the drain evicted, workloads by name: the status keeps only counts and the last names once the node moves on. */
    public void nodeDrained(CustomResource<?, ? extends NodeOperationStatus> resource, NodeProgress node) {
        nodeEvent(resource, node.getName(), NODE_DRAINED, "Drained node " + node.getName() + ": "
                + (node.getDrain() == null ? "no pod evicted" : node.getDrain().evictedSummary()) + ".");
    }

    /** {@link NodeWork#release} uncordoned the node: said on the operation and on the node, with why ("because …", "now that …"). */
    public void uncordoned(CustomResource<?, ? extends NodeOperationStatus> resource, String node, String why) {
        nodeEvent(resource, node, UNCORDONED, "Uncordoned node " + node + " " + why + ".");
    }

    public void event(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message) {
        events.normal(resource, reason, message);
    }

    /**
     * Something done to a node (cordoned, drained, upgraded, given back): an event on the operation, and the same
     * on the Node naming the operation, so that `kubectl describe node` tells who did what to it and why.
     */
    public void nodeEvent(CustomResource<?, ? extends NodeOperationStatus> resource, String node, String reason, String message) {
        events.normal(resource, reason, message);
        events.normalOnNode(node, reason, byWhom(resource) + message);
    }

    /** {@link #nodeEvent} as a Warning: something about the node a person may have to act on. */
    public void nodeWarning(CustomResource<?, ? extends NodeOperationStatus> resource, String node, String reason, String message) {
        events.warning(resource, reason, message);
        events.warningOnNode(node, reason, byWhom(resource) + message);
    }

    /** How an event on a Node names the operation behind it, as `kubectl get` would: {@code NodeUpgrade to-1-35: }. */
    static String byWhom(CustomResource<?, ?> resource) {
        return resource.getKind() + " " + resource.getMetadata().getName() + ": ";
    }

    /**
     * How a CloudStack write of {@code resource} tells its progress: through this recorder (its progress under
     * {@code stage}) and persisted with {@code store}.
     */
    public CloudStackWrite.Report writeReport(CustomResource<?, ? extends NodeOperationStatus> resource, StatusStore store, String stage,
            Instant now) {
        return new CloudStackWrite.Report() {
            @Override
            public void persist() {
                store.persist(resource);
            }

            @Override
            public void waiting(String reason, String message) {
                OperationRecorder.this.waiting(resource, reason, message, now);
            }

            @Override
            public void progressing(String message) {
                OperationRecorder.this.progressing(resource, stage, message, now);
            }

            @Override
            public void event(String reason, String message) {
                OperationRecorder.this.event(resource, reason, message);
            }

            @Override
            public void warning(String reason, String message) {
                OperationRecorder.this.warning(resource, reason, message);
            }
        };
    }

    public void warning(CustomResource<?, ? extends NodeOperationStatus> resource, String reason, String message) {
        events.warning(resource, reason, message);
    }

    public void nodeStep(String step, java.time.Duration took) {
        metrics.nodeStep(kind, step, took);
    }

    public static String firstLine(String text) {
        return text == null ? "" : text.lines().findFirst().orElse("");
    }

    private static Long generation(CustomResource<?, ?> resource) {
        return resource.getMetadata().getGeneration();
    }
}
