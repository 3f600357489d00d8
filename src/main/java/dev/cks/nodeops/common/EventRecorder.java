package dev.cks.nodeops.common;

import java.time.Clock;
import java.time.Instant;
import java.util.Locale;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Events on our CRs and on the Nodes they work on, as `kubectl describe` shows them. Both are
 * cluster-scoped, so their events live in the default namespace (where Kubernetes puts events of
 * cluster-scoped objects). Events are best effort: failing to record one never fails an operation.
 */
@ApplicationScoped
public class EventRecorder {
    public static final String NAMESPACE = "default";
    public static final String COMPONENT = "cks-node-operator";
    private static final Logger LOG = Logger.getLogger(EventRecorder.class);
    private static final int MAX_MESSAGE = 1024;

    private final KubernetesClient client;
    private final Clock clock;

    public EventRecorder(KubernetesClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    public void normal(HasMetadata subject, String reason, String message) {
        record(about(subject), "Normal", reason, message);
    }

    public void warning(HasMetadata subject, String reason, String message) {
        record(about(subject), "Warning", reason, message);
    }

    /** A Normal event on the Node of that name. */
    public void normalOnNode(String node, String reason, String message) {
        record(aboutNode(node), "Normal", reason, message);
    }

    /** A Warning event on the Node of that name. */
    public void warningOnNode(String node, String reason, String message) {
        record(aboutNode(node), "Warning", reason, message);
    }

    static ObjectReference about(HasMetadata subject) {
        return new ObjectReferenceBuilder().withApiVersion(subject.getApiVersion()).withKind(subject.getKind())
                .withName(subject.getMetadata().getName()).withUid(subject.getMetadata().getUid())
                .withResourceVersion(subject.getMetadata().getResourceVersion()).build();
    }

    /**
     * A Node as the kubelet names it in its events: the node's name as its uid, because that is what `kubectl
     * describe node` searches events by (kubectl's NodeDescriber sets ref.UID to the name), so an event with
     * the Node object's real uid would not show there.
     */
    static ObjectReference aboutNode(String node) {
        return new ObjectReferenceBuilder().withApiVersion("v1").withKind("Node").withName(node).withUid(node).build();
    }

    /** Pure: the event to create; its name is unique per process as the kubelet makes them (`<object>.<hex>`). */
    static Event event(ObjectReference about, String type, String reason, String message, Instant now, long unique) {
        String time = Timestamps.format(now);
        String text = message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE - 1) + "…" : message;
        return new EventBuilder()
                .withNewMetadata()
                .withName(about.getName() + "." + Long.toHexString(unique).toLowerCase(Locale.ROOT))
                .withNamespace(NAMESPACE)
                .endMetadata()
                .withInvolvedObject(about)
                .withType(type)
                .withReason(reason)
                .withMessage(text)
                .withFirstTimestamp(time)
                .withLastTimestamp(time)
                .withCount(1)
                .withNewSource().withComponent(COMPONENT).endSource()
                .withReportingComponent(COMPONENT)
                .build();
    }

    private void record(ObjectReference about, String type, String reason, String message) {
        try {
            client.v1().events().inNamespace(NAMESPACE).resource(event(about, type, reason, message, clock.instant(), System.nanoTime())).create();
        } catch (RuntimeException e) {
            LOG.warnf("could not record event %s on %s %s: %s", reason, about.getKind(), about.getName(), e.getMessage());
        }
    }
}
