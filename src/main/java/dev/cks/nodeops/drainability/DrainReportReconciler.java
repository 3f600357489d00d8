package dev.cks.nodeops.drainability;

import java.time.Clock;

import jakarta.inject.Inject;

import dev.cks.nodeops.common.EventRecorder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.quarkiverse.operatorsdk.annotations.RBACVerbs;

/**
 * Runs a {@link DrainabilityPass} every spec.intervalSeconds through JOSDK's reschedule, as the VMMapAudit does.
 * Called for deletions too (no finalizer: nothing to clean up but the report's series, which need no write).
 */
@ControllerConfiguration(name = "drainreport", triggerReconcilerOnAllEvents = true)
// As the audit: a pass whose status cannot be written is tried again until it lands, at most 30 s apart.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
@RBACRule(apiGroups = "", resources = { "nodes", "pods" }, verbs = { RBACVerbs.LIST })
@RBACRule(apiGroups = "policy", resources = "poddisruptionbudgets", verbs = { RBACVerbs.LIST })
@RBACRule(apiGroups = "", resources = "events", verbs = { RBACVerbs.CREATE })
public class DrainReportReconciler implements Reconciler<DrainReport> {
    private final Clock clock;
    private final ClusterReader cluster;
    private final EventRecorder events;
    private final DrainabilityMetrics metrics;

    @Inject
    public DrainReportReconciler(Clock clock, KubernetesClient client, EventRecorder events, DrainabilityMetrics metrics) {
        this(clock, new ApiClusterReader(client), events, metrics);
    }

    DrainReportReconciler(Clock clock, ClusterReader cluster, EventRecorder events, DrainabilityMetrics metrics) {
        this.clock = clock;
        this.cluster = cluster;
        this.events = events;
        this.metrics = metrics;
    }

    @Override
    public UpdateControl<DrainReport> reconcile(DrainReport resource, Context<DrainReport> context) {
        if (context.isPrimaryResourceDeleted()) {
            metrics.forget(resource.getMetadata().getName());
            return UpdateControl.noUpdate();
        }
        DrainabilityPass.Outcome outcome = new DrainabilityPass(clock, cluster, events, metrics).run(resource);
        resource.setStatus(outcome.status());
        // As the audit's: the pass's events are out, so its status (with the nodes it announced) must land even if the
        // report was edited meanwhile, or the retry would announce them again. Only the leader writes this status.
        resource.getMetadata().setResourceVersion(null);
        UpdateControl<DrainReport> control = UpdateControl.patchStatus(resource);
        outcome.rescheduleAfter().ifPresent(control::rescheduleAfter);
        return control;
    }
}
