package dev.cks.nodeops.upgrade;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;

/**
 * What wakes a NodeUpgrade besides its own changes: Node changes and its upgrade Jobs. Decisions read
 * the API server (one Node per wake-up), so the informers are only there to wake.
 */
final class UpgradeEventSources {
    private UpgradeEventSources() {
    }

    static List<EventSource<?, NodeUpgrade>> prepare(EventSourceContext<NodeUpgrade> context, OperatorSettings settings) {
        // Node changes (Ready, kubelet version, a lock released) wake the upgrades still under way.
        InformerEventSource<Node, NodeUpgrade> nodes = new InformerEventSource<>(InformerEventSourceConfiguration.from(Node.class, NodeUpgrade.class)
                .withName("nodes")
                .withSecondaryToPrimaryMapper(node -> context.getPrimaryCache().list(u -> u.getStatus() == null || !u.getStatus().finished())
                        .map(ResourceID::fromResource).collect(Collectors.toSet()))
                .build(), context);
        // Our Jobs, by their label, wake the upgrade that owns them when they finish.
        InformerEventSource<Job, NodeUpgrade> jobs = new InformerEventSource<>(InformerEventSourceConfiguration.from(Job.class, NodeUpgrade.class)
                .withName("upgrade-jobs")
                .withNamespaces(Set.of(settings.namespace()))
                .withFollowControllerNamespacesChanges(false)
                .withLabelSelector(UpgradeJob.LABEL_NODEUPGRADE)
                // The label may hold a hash of a long name; the owner reference holds the name itself.
                .withSecondaryToPrimaryMapper(job -> job.getMetadata().getOwnerReferences().stream()
                        .filter(owner -> "NodeUpgrade".equals(owner.getKind())).map(owner -> new ResourceID(owner.getName()))
                        .collect(Collectors.toSet()))
                .build(), context);
        return List.of(nodes, jobs);
    }
}
