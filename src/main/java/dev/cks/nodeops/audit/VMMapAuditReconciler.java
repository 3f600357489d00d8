package dev.cks.nodeops.audit;

import java.time.Clock;
import java.util.List;
import java.util.Set;

import jakarta.inject.Inject;

import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import io.quarkiverse.operatorsdk.annotations.RBACRule;
import io.quarkiverse.operatorsdk.annotations.RBACVerbs;

/**
 * Runs an {@link AuditPass} every spec.intervalSeconds through JOSDK's reschedule, so no thread of
 * ours waits between runs and a restart simply resumes with the next reconcile.
 */
@ControllerConfiguration(name = "vmmapaudit")
@RBACRule(apiGroups = "", resources = "nodes", verbs = { RBACVerbs.GET, RBACVerbs.LIST, RBACVerbs.WATCH })
@RBACRule(apiGroups = "", resources = "events", verbs = { RBACVerbs.CREATE })
public class VMMapAuditReconciler implements Reconciler<VMMapAudit> {
    private final Clock clock;
    private final AuditSource source;
    private final AuditSettings settings;
    private final EventRecorder events;
    private final AuditMetrics metrics;
    private final KubernetesClient client;
    private volatile NodeSource nodes = () -> ClusterNodes.unavailable("the operator's watch on Nodes has not started");

    @Inject
    public VMMapAuditReconciler(Clock clock, AuditSource source, OperatorSettings settings, EventRecorder events,
            AuditMetrics metrics, KubernetesClient client) {
        this(clock, source, AuditSettings.of(settings), events, metrics, null, client);
    }

    VMMapAuditReconciler(Clock clock, AuditSource source, AuditSettings settings, EventRecorder events,
            AuditMetrics metrics, NodeSource nodes) {
        this(clock, source, settings, events, metrics, nodes, null);
    }

    private VMMapAuditReconciler(Clock clock, AuditSource source, AuditSettings settings, EventRecorder events,
            AuditMetrics metrics, NodeSource nodes, KubernetesClient client) {
        this.client = client;
        this.clock = clock;
        this.source = source;
        this.settings = settings;
        this.events = events;
        this.metrics = metrics;
        if (nodes != null) {
            this.nodes = nodes;
        }
    }

    /**
     * Watches Nodes only to have them cached: the mapper names no VMMapAudit, so Node changes never
     * trigger an audit (the interval does). The cache keeps only what the audit reads.
     */
    @Override
    public List<EventSource<?, VMMapAudit>> prepareEventSources(EventSourceContext<VMMapAudit> context) {
        InformerEventSource<Node, VMMapAudit> informer = new InformerEventSource<>(
                InformerEventSourceConfiguration.from(Node.class, VMMapAudit.class)
                        .withName("vmmapaudit-nodes")
                        .withSecondaryToPrimaryMapper(node -> Set.of())
                        .withItemStore(new TransformingItemStore<>(InformerNodeSource::nameAndCreation))
                        // In pages, like every list: a thousand whole Nodes parsed at once set the heap's size
                        // at start-up (docs/benchmarks.md, "Idle beside 1,000 Nodes").
                        .withInformerListLimit(ListPages.PAGE)
                        .build(),
                context);
        nodes = InformerNodeSource.of(informer, client);
        return List.of(informer);
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
