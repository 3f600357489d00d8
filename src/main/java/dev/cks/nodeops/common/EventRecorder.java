package dev.cks.nodeops.common;

import java.time.Clock;
import java.util.Locale;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Events on our CRs, as `kubectl describe` shows them. The CRs are cluster-scoped, so their events
 * live in the default namespace (where Kubernetes puts events of cluster-scoped objects). Events
 * are best effort: failing to record one never fails an operation.
 */
@ApplicationScoped
public class EventRecorder {
    public static final String NAMESPACE = "default";
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);
    private static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;
    private final Clock clock;

    public EventRecorder(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    public void normal(HasMetadata subject, String reason, String message) {
        record(subject, "Normal", reason, message);
    }

    public void warning(HasMetadata subject, String reason, String message) {
        record(subject, "Warning", reason, message);
    }

    private void record(HasMetadata subject, String type, String reason, String message) {
        String now = Timestamps.format(clock.instant());
        String text = message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE - 1) + "…" : message;
        try {
            client.v1().events().inNamespace(NAMESPACE).resource(new EventBuilder()
                    .withNewMetadata()
                    .withName(subject.getMetadata().getName() + "." + Long.toHexString(System.nanoTime()).toLowerCase(Locale.ROOT))
                    .withNamespace(NAMESPACE)
                    .endMetadata()
                    .withNewInvolvedObject()
                    .withApiVersion(subject.getApiVersion())
                    .withKind(subject.getKind())
                    .withName(subject.getMetadata().getName())
                    .withUid(subject.getMetadata().getUid())
                    .withResourceVersion(subject.getMetadata().getResourceVersion())
                    .endInvolvedObject()
                    .withType(type)
                    .withReason(reason)
                    .withMessage(text)
                    .withFirstTimestamp(now)
                    .withLastTimestamp(now)
                    .withCount(1)
                    .withNewSource().withComponent("cks-node-operator").endSource()
                    .withReportingComponent("cks-node-operator")
                    .build()).create();
        } catch (RuntimeException e) {
            LOG.warnf("could not record event %s on %s %s: %s", reason, subject.getKind(), subject.getMetadata().getName(), e.getMessage());
        }
    }
}
