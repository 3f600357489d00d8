package dev.cks.nodeops.drain;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.DeleteOptionsBuilder;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;

/**
 * The one way pods leave a node: POST pods/{name}/eviction (or DELETE when eviction is disabled),
 * sent raw so the drain sees every status code and the API's message. Fabric8's `evict()` turns
 * a 429 into `false` and drops the message that names the disruption budget.
 */
public final class EvictionApi {
    /**
     * Removals (or dry runs) in flight at once: enough to empty a node quickly, and a bound on what a
     * preflight of many nodes (every evictable pod of the cluster, with an empty nodeSelector) sends at once.
     */
    public static final int MAX_IN_FLIGHT = 16;

    /** A pod as the drain saw it; the UID makes sure a replacement with the same name is never evicted by mistake. */
    public record PodRef(String namespace, String name, String uid) {
        public String ref() {
            return namespace + "/" + name;
        }

        /** namespace/name/uid, the form {@link DrainState#getPodsSeen()} had before it kept uids alone. */
        public String key() {
            return namespace + "/" + name + "/" + uid;
        }
    }

    /** The API server's answer; code 0 when no answer came (connection refused, timeout). */
    public record Answer(int code, String message, List<String> causes) {
        public boolean accepted() {
            return code >= 200 && code < 300;
        }

        /** 404: already gone. 409 on our UID precondition: the pod we saw is gone, a namesake replaced it. */
        public boolean gone() {
            return code == 404 || (code == 409 && message != null && message.contains("UID"));
        }

        public boolean tooManyRequests() {
            return code == 429;
        }

        public String describe() {
            String causeText = causes.isEmpty() ? "" : " (" + String.join("; ", causes) + ")";
            return (code == 0 ? "no answer" : "HTTP " + code) + ": " + message + causeText;
        }
    }

    private static final long REQUEST_TIMEOUT_SECONDS = 10;

    private final KubernetesClient client;

    /**
     * @throws IllegalArgumentException when the client retries 429s itself: the drain must see them
     *     to report which budget blocks it
     */
    public EvictionApi(KubernetesClient client) {
        if (client.getConfiguration().getRequestRetryBackoffLimit() > 0) {
            throw new IllegalArgumentException("The Kubernetes client used for evictions retries HTTP 429 itself (requestRetryBackoffLimit="
                    + client.getConfiguration().getRequestRetryBackoffLimit() + "); build it with requestRetryBackoffLimit=0 so the drain sees which PodDisruptionBudget blocks.");
        }
        this.client = client;
    }

    /**
     * @param gracePeriodSeconds null or negative: the pod's own terminationGracePeriodSeconds
     * @param dryRun validate and check budgets only (`dryRun=All`); nothing is removed
     * @param disableEviction a plain DELETE, which bypasses PodDisruptionBudgets
     */
    public CompletableFuture<Answer> remove(PodRef pod, Integer gracePeriodSeconds, boolean dryRun, boolean disableEviction) {
        DeleteOptionsBuilder options = new DeleteOptionsBuilder().withNewPreconditions().withUid(pod.uid()).endPreconditions();
        if (gracePeriodSeconds != null && gracePeriodSeconds >= 0) {
            options.withGracePeriodSeconds(gracePeriodSeconds.longValue());
        }
        String podPath = "api/v1/namespaces/" + encode(pod.namespace()) + "/pods/" + encode(pod.name());
        String query = dryRun ? "?dryRun=All" : "";
        HttpRequest.Builder request = client.getHttpClient().newHttpRequestBuilder().timeout(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (disableEviction) {
            String body = client.getKubernetesSerialization().asJson(options.withApiVersion("v1").withKind("DeleteOptions").build());
            request.uri(url(podPath + query)).delete("application/json", body);
        } else {
            String body = client.getKubernetesSerialization().asJson(new EvictionBuilder()
                    .withNewMetadata().withNamespace(pod.namespace()).withName(pod.name()).endMetadata()
                    .withDeleteOptions(options.build()).build());
            request.uri(url(podPath + "/eviction" + query)).post("application/json", body);
        }
        return client.getHttpClient().sendAsync(request.build(), String.class)
                .thenApply(response -> answer(response.code(), response.body()))
                .exceptionally(e -> new Answer(0, Objects.toString(rootCause(e).getMessage(), rootCause(e).toString()), List.of()));
    }

    /**
     * Sends one request per item, at most {@link #MAX_IN_FLIGHT} at a time, and collects the answers; an
     * item whose answer has not come within {@code within} (counted from the call) reads as code 0, "no
     * answer within …". Never throws.
     */
    public static <T> Map<T, Answer> each(List<T> items, Function<T, CompletableFuture<Answer>> send, Duration within) {
        long ends = System.nanoTime() + within.toNanos();
        // A sliding window, not batches: one slow or lost answer holds one slot, not the requests after it.
        Semaphore slots = new Semaphore(MAX_IN_FLIGHT);
        Map<T, CompletableFuture<Answer>> inFlight = new LinkedHashMap<>();
        try {
            for (T item : items) {
                if (!slots.tryAcquire(Math.max(0, ends - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    break;
                }
                CompletableFuture<Answer> answer = send.apply(item);
                answer.whenComplete((done, failed) -> slots.release());
                inFlight.put(item, answer);
            }
            CompletableFuture.allOf(inFlight.values().toArray(CompletableFuture[]::new)).get(Math.max(0, ends - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Each answer is collected on its own; one that is missing reads as "no answer".
        }
        Answer none = new Answer(0, "no answer within " + within.toSeconds() + "s", List.of());
        Map<T, Answer> answers = new LinkedHashMap<>();
        items.forEach(item -> answers.put(item, inFlight.containsKey(item) ? inFlight.get(item).getNow(none) : none));
        return answers;
    }

    private Answer answer(int code, String body) {
        if (code >= 200 && code < 300) {
            return new Answer(code, "accepted", List.of());
        }
        try {
            Status status = client.getKubernetesSerialization().unmarshal(body, Status.class);
            List<String> causes = status.getDetails() == null || status.getDetails().getCauses() == null ? List.of()
                    : status.getDetails().getCauses().stream().map(StatusCause::getMessage).filter(Objects::nonNull).toList();
            return new Answer(code, Objects.toString(status.getMessage(), ""), causes);
        } catch (RuntimeException notAStatus) {
            return new Answer(code, body == null ? "" : BlockedByReport.tail(body), List.of());
        }
    }

    private String url(String path) {
        String master = client.getMasterUrl().toString();
        return master.endsWith("/") ? master + path : master + "/" + path;
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8);
    }

    private static Throwable rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }
}
