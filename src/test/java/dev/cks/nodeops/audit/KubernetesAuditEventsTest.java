package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;

class KubernetesAuditEventsTest {
    private final MockWebServer apiServer = new MockWebServer();
    private KubernetesClient client;
    private KubernetesAuditEvents events;

    @BeforeEach
    void start() throws Exception {
        apiServer.start();
        client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(apiServer.url("/").toString())
                .withRequestRetryBackoffLimit(0).build()).build();
        events = new KubernetesAuditEvents(client, Clock.fixed(Instant.parse("2026-11-30T12:00:00Z"), ZoneOffset.UTC));
    }

    @AfterEach
    void stop() {
        client.close();
        apiServer.close();
    }

    @Test
    void aWarningBecomesACoreEventAboutTheAudit() throws Exception {
        apiServer.enqueue(new MockResponse.Builder().code(201).body("{}").build());
        VMMapAudit audit = AuditFakes.audit("c-1");
        events.warning(audit, AuditEvents.DRIFT, "VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Destroyed.");

        RecordedRequest request = apiServer.takeRequest(5, TimeUnit.SECONDS);
        assertThat(request.getMethod()).isEqualTo("POST");
        assertThat(request.getUrl().encodedPath()).isEqualTo("/api/v1/namespaces/default/events");
        Event sent = Serialization.unmarshal(request.getBody().utf8(), Event.class);
        assertThat(sent.getType()).isEqualTo("Warning");
        assertThat(sent.getReason()).isEqualTo("VmMapDrift");
        assertThat(sent.getMessage()).isEqualTo("VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Destroyed.");
        assertThat(sent.getInvolvedObject().getKind()).isEqualTo("VMMapAudit");
        assertThat(sent.getInvolvedObject().getApiVersion()).isEqualTo("nodeops.cks.dev/v1alpha1");
        assertThat(sent.getInvolvedObject().getName()).isEqualTo("cluster");
        assertThat(sent.getInvolvedObject().getUid()).isEqualTo("u-1");
        assertThat(sent.getLastTimestamp()).isEqualTo("2026-11-30T12:00:00Z");
        assertThat(sent.getMetadata().getName()).startsWith("cluster.");
    }

    @Test
    void aRefusedEventDoesNotFailTheAudit() {
        apiServer.enqueue(new MockResponse.Builder().code(403).body("{\"kind\":\"Status\",\"code\":403}").build());
        assertThatCode(() -> events.normal(AuditFakes.audit("c-1"), AuditEvents.IN_SYNC, "Cluster prod is in sync again."))
                .doesNotThrowAnyException();
    }
}
