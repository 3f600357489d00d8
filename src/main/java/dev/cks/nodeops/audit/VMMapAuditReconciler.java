package dev.cks.nodeops.audit;

import java.time.Clock;

import jakarta.inject.Inject;

import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.nodes.NodeCache;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.quarkiverse.operatorsdk.annotations.RBACVerbs;

/**
 * Runs an {@link AuditPass} every spec.intervalSeconds through JOSDK's reschedule, so no thread of
 * ours waits between runs and a restart simply resumes with the next reconcile.
 */
@ControllerConfiguration(name = "vmmapaudit")
// A run whose status cannot be written (the API server away) is tried again until it lands: JOSDK's default
// retry gives up after 5 attempts, about 25 s, and then nothing but the 10-hour maximum reconciliation interval
// would wake the audit. At most 30 s between attempts, so the audit catches up within a minute of the return.
@GradualRetry(maxAttempts = -1, initialInterval = 2000, maxInterval = 30000)
@RBACRule(apiGroups = "", resources = "nodes", verbs = { RBACVerbs.GET, RBACVerbs.LIST, RBACVerbs.WATCH })
@RBACRule(apiGroups = "", resources = "events", verbs = { RBACVerbs.CREATE })
public class VMMapAuditReconciler implements Reconciler<VMMapAudit> {
    private final Clock clock;
    private final AuditSource source;
    private final AuditSettings settings;
    private final EventRecorder events;
    private final AuditMetrics metrics;
    private final NodeSource nodes;

    /** The Nodes come from the operator's one Node cache (the NodeUpgrade controller's informer): Node changes never trigger an audit, the interval does. */
    @Inject
    public VMMapAuditReconciler(Clock clock, AuditSource source, OperatorSettings settings, EventRecorder events,
            AuditMetrics metrics, KubernetesClient client, NodeCache nodeCache) {
        this(clock, source, AuditSettings.of(settings), events, metrics, InformerNodeSource.of(nodeCache, client));
    }

    VMMapAuditReconciler(Clock clock, AuditSource source, AuditSettings settings, EventRecorder events,
            AuditMetrics metrics, NodeSource nodes) {
        this.clock = clock;
        this.source = source;
        this.settings = settings;
        this.events = events;
        this.metrics = metrics;
        this.nodes = nodes;
    }

    @Override
    public UpdateControl<VMMapAudit> reconcile(VMMapAudit resource, Context<VMMapAudit> context) {
        AuditPass.Outcome outcome = new AuditPass(clock, source, nodes, settings, events, metrics).run(resource);
        resource.setStatus(outcome.status());
        // The run's events are out already, so its status (with the keys it announced) must land even
        // if the audit was edited meanwhile (a label, a spec change); a conflict would make the retry
        // announce the same findings again. Without a resourceVersion JOSDK's server-side apply checks
        // no version; only the leader writes this status.
        resource.getMetadata().setResourceVersion(null);
        UpdateControl<VMMapAudit> control = UpdateControl.patchStatus(resource);
        outcome.rescheduleAfter().ifPresent(control::rescheduleAfter);
        return control;
    }
}
