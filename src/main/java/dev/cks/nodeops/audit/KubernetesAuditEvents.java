package dev.cks.nodeops.audit;

import java.time.Clock;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import dev.cks.nodeops.common.Timestamps;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/** Writes core/v1 Events, so findings show in {@code kubectl describe vma} and in event exporters. */
@ApplicationScoped
public class KubernetesAuditEvents implements AuditEvents {
    private static final Logger LOG = Logger.getLogger(KubernetesAuditEvents.class);
    /** VMMapAudit is cluster-scoped; like Nodes' events, its events live in the default namespace. */
    private static final String EVENT_NAMESPACE = "default";
    private static final String COMPONENT = "cks-node-operator";

    private final KubernetesClient client;
    private final Clock clock;

    public KubernetesAuditEvents(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    @Override
    public void warning(VMMapAudit audit, String reason, String message) {
        create(audit, "Warning", reason, message);
    }

    @Override
    public void normal(VMMapAudit audit, String reason, String message) {
        create(audit, "Normal", reason, message);
    }

    private void create(VMMapAudit audit, String type, String reason, String message) {
        String now = Timestamps.format(clock.instant());
        Event event = new EventBuilder()
                .withNewMetadata()
                .withName(audit.getMetadata().getName() + "." + UUID.randomUUID().toString().substring(0, 8))
                .withNamespace(EVENT_NAMESPACE)
                .endMetadata()
                .withNewInvolvedObject()
                .withApiVersion(audit.getApiVersion())
                .withKind(audit.getKind())
                .withName(audit.getMetadata().getName())
                .withUid(audit.getMetadata().getUid())
                .withResourceVersion(audit.getMetadata().getResourceVersion())
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(message)
                .withFirstTimestamp(now)
                .withLastTimestamp(now)
                .withCount(1)
                .withNewSource().withComponent(COMPONENT).endSource()
                .build();
        try {
            client.v1().events().inNamespace(EVENT_NAMESPACE).resource(event).create();
        } catch (KubernetesClientException e) {
            // The finding stays in status and metrics; a lost event must not fail the audit and make it re-announce.
            LOG.warnf("Could not record %s event %s for VMMapAudit %s: %s", type, reason, audit.getMetadata().getName(),
                    e.getMessage());
        }
    }
}
