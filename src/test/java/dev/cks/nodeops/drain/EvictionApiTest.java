package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.EvictionApi.Answer;
import dev.cks.nodeops.drain.EvictionApi.PodRef;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;

/** The wire format of the one eviction path; PDB behaviour itself is tested against the real API server (DrainIT). */
class EvictionApiTest {
    private static final String PDB_429 = """
            {"kind":"Status","apiVersion":"v1","status":"Failure","code":429,"reason":"TooManyRequests",
             "message":"Cannot evict pod as it would violate the pod's disruption budget.",
             "details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web-pdb needs 3 healthy pods and has 3 currently"}]}}""";

    private MockWebServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() throws Exception {
        server = new MockWebServer();
        server.start();
        client = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(server.url("/").toString())
                .withRequestRetryBackoffLimit(0).build()).build();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void aPdb429IsSeenOnceWithTheMessageThatNamesTheBudget() throws Exception {
        server.enqueue(new MockResponse.Builder().code(429).addHeader("Content-Type", "application/json").body(PDB_429).build());

        Answer answer = new EvictionApi(client).remove(new PodRef("shop", "web-1", "uid-1"), -1, false, false).get(10, TimeUnit.SECONDS);

        assertThat(answer.tooManyRequests()).isTrue();
        assertThat(answer.message()).isEqualTo("Cannot evict pod as it would violate the pod's disruption budget.");
        assertThat(DisruptionBudgets.namedIn(answer.causes())).hasValue("web-pdb");
        RecordedRequest request = server.takeRequest(1, TimeUnit.SECONDS);
        assertThat(request.getMethod()).isEqualTo("POST");
        assertThat(request.getTarget()).isEqualTo("/api/v1/namespaces/shop/pods/web-1/eviction");
        String body = request.getBody().utf8();
        assertThat(body).contains("\"kind\":\"Eviction\"").contains("\"uid\":\"uid-1\"").doesNotContain("gracePeriodSeconds");
        assertThat(server.getRequestCount()).as("the client does not retry the 429 behind our back").isEqualTo(1);
    }

    @Test
    void dryRunAndGracePeriodAreSent() throws Exception {
        server.enqueue(new MockResponse.Builder().code(201).body("{}").build());

        Answer answer = new EvictionApi(client).remove(new PodRef("shop", "web-1", "uid-1"), 0, true, false).get(10, TimeUnit.SECONDS);

        assertThat(answer.accepted()).isTrue();
        RecordedRequest request = server.takeRequest(1, TimeUnit.SECONDS);
        assertThat(request.getTarget()).isEqualTo("/api/v1/namespaces/shop/pods/web-1/eviction?dryRun=All");
        assertThat(request.getBody().utf8()).contains("\"gracePeriodSeconds\":0");
    }

    @Test
    void disableEvictionDeletesThePodDirectly() throws Exception {
        server.enqueue(new MockResponse.Builder().code(404).addHeader("Content-Type", "application/json")
                .body("{\"kind\":\"Status\",\"code\":404,\"message\":\"pods \\\"web-1\\\" not found\"}").build());

        Answer answer = new EvictionApi(client).remove(new PodRef("shop", "web-1", "uid-1"), 30, false, true).get(10, TimeUnit.SECONDS);

        assertThat(answer.gone()).as("404 means the pod is already gone").isTrue();
        RecordedRequest request = server.takeRequest(1, TimeUnit.SECONDS);
        assertThat(request.getMethod()).isEqualTo("DELETE");
        assertThat(request.getTarget()).isEqualTo("/api/v1/namespaces/shop/pods/web-1");
        assertThat(request.getBody().utf8()).contains("\"gracePeriodSeconds\":30").contains("\"uid\":\"uid-1\"");
    }

    @Test
    void aReplacedPodIsGoneNotAnError() {
        assertThat(new Answer(409, "Precondition failed: UID in precondition: a, UID in object meta: b", java.util.List.of()).gone()).isTrue();
        assertThat(new Answer(409, "Operation cannot be fulfilled", java.util.List.of()).gone()).isFalse();
    }

    @Test
    void aClientThatRetries429ItselfIsRefused() {
        try (KubernetesClient retrying = new KubernetesClientBuilder().withConfig(new ConfigBuilder().withMasterUrl(server.url("/").toString())
                .withRequestRetryBackoffLimit(10).build()).build()) {
            assertThatThrownBy(() -> new EvictionApi(retrying)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("requestRetryBackoffLimit=0");
        }
    }

    @Test
    void manyRequestsGoAtMostSixteenAtATimeAndAMissingAnswerReadsAsNone() {
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger mostInFlight = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ExecutorService answering = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            java.util.List<Integer> pods = java.util.stream.IntStream.range(0, 100).boxed().toList();
            java.util.Map<Integer, Answer> answers = EvictionApi.each(pods, pod -> {
                mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                if (pod == 42) {
                    inFlight.decrementAndGet(); // this request's answer is lost
                    return new java.util.concurrent.CompletableFuture<>();
                }
                return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    // The API server's latency: without a bound, all 100 would be in flight now.
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
                    inFlight.decrementAndGet();
                    return new Answer(201, "accepted", java.util.List.of());
                }, answering);
            }, java.time.Duration.ofSeconds(2));

            assertThat(mostInFlight.get()).isEqualTo(EvictionApi.MAX_IN_FLIGHT);
            assertThat(answers).hasSize(100);
            assertThat(answers.get(42).code()).isZero();
            assertThat(answers.get(42).message()).startsWith("no answer within");
            assertThat(answers.entrySet().stream().filter(e -> e.getKey() != 42)).allMatch(e -> e.getValue().accepted());
        } finally {
            answering.shutdownNow();
        }
    }
}
