package dev.cks.nodeops.scaledown;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.inject.Inject;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.OperationMetrics;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainClient;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.PodSelection;
import dev.cks.nodeops.nodes.NodeLock;
import dev.cks.nodeops.operation.DrainWakeups;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.NodeWork;
import dev.cks.nodeops.operation.OperationPorts;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.PreflightGate;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.operation.WindowFit;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;

/**
 * Removes worker nodes as cluster-autoscaler's scale-down does: cordon every node first (so pods evicted
 * from one are not rescheduled onto another that is going away too), drain them one by one, and only
 * when all are drained remove them through CloudStack ({@link ScaleDownRemoval}); any failure before
 * that puts back what this ScaleDown changed. Each reconcile advances one step and keeps everything in
 * status, so a restarted operator carries on where the last one stopped (docs/scaledown.md).
 */
@ControllerConfiguration(name = "scaledown")
// An API-server blip must not stall a ScaleDown with its nodes cordoned: never give up retrying.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
public class ScaleDownReconciler implements Reconciler<ScaleDown>, Cleaner<ScaleDown> {
    static final String KIND = "ScaleDown";
    static final String LOCK_RECLAIMED = "LockReclaimed";
    /** How often a ScaleDown waiting for CloudStack (busy cluster, unreachable API) looks again. */
    static final Duration RECHECK_CLOUDSTACK = Duration.ofSeconds(10);

    private final Clock clock;
    private final NodeWork work;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final ScaleDownPlanner planner;
    private final ScaleDownRollback rollback;
    private final ScaleDownDrains drains;
    private final ScaleDownRemoval removal;
    private final OperatorSettings settings;

    @Inject
    public ScaleDownReconciler(KubernetesClient client, DrainClient drainClient, Clock clock, CloudStackAccess cloudStack, EventRecorder events,
            OperationMetrics metrics, OperatorSettings settings) {
        this(clock, cloudStack, settings, OperationPorts.onCluster(client, drainClient, KIND, events, metrics, settings));
    }

    ScaleDownReconciler(Clock clock, CloudStackAccess cloudStack, OperatorSettings settings, OperationPorts ports) {
        this.clock = clock;
        this.settings = settings;
        this.work = ports.work();
        this.recorder = ports.recorder();
        this.store = ports.store();
        this.planner = new ScaleDownPlanner(work, cloudStack, RECHECK_CLOUDSTACK.toSeconds());
        this.rollback = new ScaleDownRollback(work, recorder, store, planner);
        this.drains = new ScaleDownDrains(settings, work, recorder, planner, rollback, RECHECK_CLOUDSTACK);
        this.removal = new ScaleDownRemoval(cloudStack, work, recorder, store, rollback, RECHECK_CLOUDSTACK);
    }

    @Override
    public List<EventSource<?, ScaleDown>> prepareEventSources(EventSourceContext<ScaleDown> context) {
        store.writeAs(context.getControllerConfiguration().fieldManager());
        return List.of(new DrainWakeups<>(work));
    }

    @Override
    public UpdateControl<ScaleDown> reconcile(ScaleDown resource, Context<ScaleDown> context) {
        ScaleDownStatus status = resource.getStatus() == null ? new ScaleDownStatus() : resource.getStatus();
        resource.setStatus(status);
        replaceOlderStatus(resource);
        if (status.finished()) {
            return UpdateControl.noUpdate();
        }
        Instant now = clock.instant();
        if (status.getRollback() != null) {
            return recorder.step(resource, List.of(), now, () -> rollback.finish(resource, now));
        }
        return recorder.step(resource, ScaleDownValidation.problems(resource.getSpec()), now, () -> estimated(resource, switch (status.getPhase() == null
                ? ScaleDownStatus.Phase.Pending : status.getPhase()) {
            case Pending, Waiting -> plan(resource, now);
            case Cordoning -> held(resource, WorkGate.Work.NEW, now).orElseGet(() -> drains.cordonAll(resource, now));
            case Draining -> drainStep(resource, now);
            // Removal, once asked for, runs to the end.
            case Removing -> (status.getRemoval() == null ? held(resource, WorkGate.Work.NEW, now) : held(resource, null, now))
                    .orElseGet(() -> removal.step(resource, now));
            case Succeeded, RolledBack, Failed -> Step.finished();
        }, now));
    }

    /**
     * The estimated finish after this reconcile's step, kept current as drains finish; none before the nodes are planned,
     * once the ScaleDown is over (its end cleared it) or while it rolls back.
     */
    private Step estimated(ScaleDown resource, Step step, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        if (status.getStartedAt() != null && !status.finished()) {
            recorder.estimate(resource, status.getRollback() != null ? Optional.empty()
                    : ScaleDownEstimate.of(resource.getSpec(), status, status.getNodes(), settings.estimate(), now));
        }
        return step;
    }

    /** An exception from a step (the API server gone, a bug): the error goes to status and the step is retried with backoff. */
    @Override
    public ErrorStatusUpdateControl<ScaleDown> updateErrorStatus(ScaleDown resource, Context<ScaleDown> context, Exception e) {
        return recorder.retrying(resource, e, clock.instant());
    }

    /**
     * Deleting a ScaleDown half-way leaves no node cordoned or locked by it: before removal, what it
     * cordoned is given back; once removal has begun, the removal is finished first (the finalizer stays
     * until CloudStack's outcome is known), then whatever is still in the cluster is given back.
     */
    @Override
    public DeleteControl cleanup(ScaleDown resource, Context<ScaleDown> context) {
        replaceOlderStatus(resource);
        ScaleDownStatus status = resource.getStatus();
        if (status != null && status.getRemoval() != null && !status.finished()) {
            Step step = removal.step(resource, clock.instant());
            store.persist(resource);
            if (!step.isFinished()) {
                return DeleteControl.noFinalizerRemoval().rescheduleAfter(step.after());
            }
        } else if (status != null && !status.finished()) {
            for (String node : List.copyOf(status.getTargetNodes())) {
                if (work.release(node, owner(resource), true)) {
                    recorder.uncordoned(resource, node, "because ScaleDown " + resource.getMetadata().getName() + " was deleted");
                }
                KillPoint.SCALEDOWN_DELETED_RELEASED.reached();
            }
        }
        return DeleteControl.defaultDelete();
    }

    /**
     * spec.paused and spec.window at a boundary: new work (cordoning, the next node, removal) needs the window
     * open; a drain in progress goes on unless the window says StopAtSafeBoundary; paused stops both. Held,
     * nothing happens and the time does not count against the deadline. A null work is one that is not
     * stopped (a removal under way): only the Paused condition says it is Pausing.
     */
    private Optional<Step> held(ScaleDown resource, WorkGate.Work work, Instant now) {
        ScaleDownSpec spec = resource.getSpec();
        recorder.window(resource, WorkGate.check(spec.getPaused(), spec.getWindow(), WorkGate.Work.NEW, now));
        if (work == null) {
            if (Boolean.TRUE.equals(spec.getPaused())) {
                recorder.pausing(resource, "spec.paused is true, but the removal asked of CloudStack runs to the end.", now);
            }
            return Optional.empty();
        }
        WorkGate.Verdict gate = WorkGate.check(spec.getPaused(), spec.getWindow(), work, now);
        if (gate instanceof WorkGate.Hold hold) {
            recorder.held(resource, hold, now);
            return Optional.of(hold.step(now));
        }
        recorder.resumed(resource, resource.getStatus().getNodes().stream().filter(n -> n.getPhase() == Phase.Draining)
                .map(ScaleDownNodeStatus::getDrain).toList(), now);
        return Optional.empty();
    }

    /** Pick, check, preflight, lock: nothing is cordoned before every node passed. */
    private Step plan(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        ScaleDownSpec spec = resource.getSpec();
        DrainOptions drain = drains.drainOptions(resource);
        ScaleDownPlanner.Plan plan = planner.plan(resource, owner(resource), drain, now);
        if (plan instanceof ScaleDownPlanner.Wait wait) {
            recorder.waiting(resource, wait.reason(), wait.message(), now);
            return Step.after(RECHECK_CLOUDSTACK);
        }
        if (plan instanceof ScaleDownPlanner.Refused refused) {
            return rollback.refuse(resource, refused.message(), now);
        }
        ScaleDownPlanner.Planned planned = (ScaleDownPlanner.Planned) plan;
        status.setClusterId(planned.cluster().id());
        PreflightGate.Verdict verdict = PreflightGate.check(work, planned.upNodes(), Draining.TOGETHER, drain, spec.getPreflight(), now);
        if (verdict instanceof PreflightGate.Refuse refuse) {
            return rollback.refuse(resource, refuse.message(), now);
        }
        recorder.preflight(resource, (PreflightGate.Proceed) verdict, now);
        WindowFit.Verdict fit = WindowFit.check(ScaleDownEstimate.of(spec, status, planned.nodes(), settings.estimate(), now), spec.getWindow(),
                spec.getPreflight(), KIND + " " + resource.getMetadata().getName(), now);
        if (fit instanceof WindowFit.Refuse refuse) {
            return rollback.refuse(resource, refuse.message(), now);
        }
        recorder.windowFit(resource, (WindowFit.Proceed) fit, now);
        // The picked nodes are recorded before they are locked, so a restart in between releases or keeps exactly these.
        status.setTargetNodes(new ArrayList<>(planned.targets()));
        store.persist(resource);
        Optional<String> lockRefusal = planner.lock(planned.targets(), owner(resource), note -> recorder.event(resource, LOCK_RECLAIMED, note));
        if (lockRefusal.isPresent()) {
            return rollback.refuse(resource, lockRefusal.get(), now);
        }
        KillPoint.SCALEDOWN_LOCKED.reached();
        status.setNodes(planned.nodes());
        status.setStartedAt(Timestamps.format(now));
        status.setDeadline(Timestamps.format(now.plusSeconds(spec.getTimeoutSeconds())));
        status.setProgress(ScaleDownSteps.progress(planned.nodes()));
        // Said once the ScaleDown goes ahead (not at every look while CloudStack is awaited), then in view in the Accepted condition.
        Optional<String> podDeprecation = PodSelection.deprecation(drain.getPodSelector(), KIND + " " + resource.getMetadata().getName(), true);
        podDeprecation.ifPresent(message -> recorder.warning(resource, PodSelection.DEPRECATED_POD_SELECTOR, message));
        recorder.accepted(resource, "Planned", "Removing " + planned.nodes().size() + " node(s) from CloudStack Kubernetes cluster "
                + planned.cluster().name() + ": " + String.join(", ", status.getTargetNodes()) + " (deadline for the drains " + status.getDeadline() + ")."
                + podDeprecation.map(message -> " " + message).orElse(""), now);
        status.setPhase(ScaleDownStatus.Phase.Cordoning);
        recorder.progressing(resource, "Cordoning", "Cordoning every node before draining any.", now);
        return Step.next();
    }

    /** The next node's drain; when every node is drained, the re-check that all are still ours, then removal. */
    private Step drainStep(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        Optional<ScaleDownNodeStatus> next = ScaleDownSteps.nextToDrain(status.getNodes());
        if (next.isEmpty()) {
            return allDrained(resource, now);
        }
        ScaleDownNodeStatus node = next.get();
        Optional<Step> held = held(resource, node.getPhase() == Phase.Cordoned ? WorkGate.Work.NEW : WorkGate.Work.IN_PROGRESS, now);
        if (held.isPresent()) {
            return held.get();
        }
        Instant deadline = status.deadlineAt(now);
        if (deadline != null && !now.isBefore(deadline)) {
            return rollback.rollBack(resource, node, "DeadlinePassed", "The deadline " + status.getDeadline() + " (spec.timeoutSeconds) passed while node "
                    + node.getName() + " was " + (node.getPhase() == Phase.Draining ? "draining" : "waiting to be drained")
                    + (node.getDrain() != null && node.getDrain().getBlockedBy() != null ? ":\n" + node.getDrain().getBlockedBy() : "."), now);
        }
        return drains.drain(resource, node, deadline, now);
    }

    private Step allDrained(ScaleDown resource, Instant now) {
        ScaleDownStatus status = resource.getStatus();
        Optional<String> notOurs = planner.notCordonedBy(status, owner(resource));
        if (notOurs.isPresent()) {
            ScaleDownNodeStatus node = status.getNodes().stream().filter(n -> n.getName().equals(notOurs.get())).findFirst().orElseThrow();
            return rollback.rollBack(resource, node, "NodeUncordoned", "Node " + node.getName() + " is no longer cordoned by this ScaleDown "
                    + "(uncordoned by someone else, or its cordon record is gone), so pods may have moved onto it; it is not removed.", now);
        }
        status.setPhase(ScaleDownStatus.Phase.Removing);
        status.setCurrentNode(null);
        recorder.event(resource, "AllDrained", "Every node is drained: " + String.join(", ", status.getTargetNodes()) + ".");
        recorder.progressing(resource, "Removing", "Every node is drained; removing them (" + resource.getSpec().getRemoval()
                + "). Once CloudStack was asked, removal runs to the end even past the deadline.", now);
        return Step.next();
    }

    /**
     * A status an operator before 0.3.0 wrote is replaced before anything is applied over it: the API server cannot apply
     * over a field whose type the CRD changed (status.targetNodes), and every write of this reconcile would fail.
     */
    private void replaceOlderStatus(ScaleDown resource) {
        ScaleDownStatus status = resource.getStatus();
        if (status != null && status.writtenByAnOlderOperator()) {
            status.setTargetNodes(new ArrayList<>(status.getTargetNodes()));
            store.replace(resource);
        }
    }

    static String owner(ScaleDown resource) {
        return NodeLock.owner(KIND, resource.getMetadata().getName(), resource.getMetadata().getUid());
    }
}
