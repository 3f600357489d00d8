package dev.cks.nodeops.drainability;

import java.time.Clock;
import java.util.List;

import jakarta.inject.Inject;

import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.nodes.NodeCache;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.quarkiverse.operatorsdk.annotations.RBACVerbs;

/**
 * Runs a {@link DrainabilityPass} every spec.intervalSeconds through JOSDK's reschedule, as the VMMapAudit does, and
 * when a Node it selects comes, goes, opts out or in, is cordoned or relabelled ({@link NodeChanges}). Called for
 * deletions too (no finalizer: nothing to clean up but the report's series, which need no write).
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
    private final NodeCache nodeCache;

    @Inject
    public DrainReportReconciler(Clock clock, KubernetesClient client, EventRecorder events, DrainabilityMetrics metrics, NodeCache nodeCache) {
        this.clock = clock;
        this.cluster = new ApiClusterReader(client);
        this.events = events;
        this.metrics = metrics;
        this.nodeCache = nodeCache;
    }

    @Override
    public List<EventSource<?, DrainReport>> prepareEventSources(EventSourceContext<DrainReport> context) {
        return List.of(NodeChanges.wakeups(nodeCache, () -> context.getPrimaryCache().list(),
                context.getControllerConfiguration().getConfigurationService().cacheSyncTimeout()));
    }

    @Override
    public UpdateControl<DrainReport> reconcile(DrainReport resource, Context<DrainReport> context) {
        if (context.isPrimaryResourceDeleted()) {
            metrics.forget(resource.getMetadata().getName());
            return UpdateControl.noUpdate();
        }
        DrainabilityPass.Outcome outcome = new DrainabilityPass(clock, cluster, events, metrics).run(resource);
        if (outcome.deferred()) {
            return UpdateControl.<DrainReport>noUpdate().rescheduleAfter(outcome.rescheduleAfter().orElseThrow());
        }
        resource.setStatus(outcome.status());
        // As the audit's: the pass's events are out, so its status (with the nodes it announced) must land even if the
        // report was edited meanwhile, or the retry would announce them again. Only the leader writes this status.
        resource.getMetadata().setResourceVersion(null);
        UpdateControl<DrainReport> control = UpdateControl.patchStatus(resource);
        outcome.rescheduleAfter().ifPresent(control::rescheduleAfter);
        return control;
    }
}
