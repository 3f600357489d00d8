package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ApiError;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ListPage;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import okhttp3.FormBody;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jboss.logging.Logger;

/**
 * The CloudStack API as the operator uses it. Every command goes through {@link #execute}: one
 * place signs, sends, retries, parses errors, logs (redacted) and records metrics. Reads are GET,
 * writes are POST (as cloudstack-go does), so a write never ends up in an access log's URL.
 */
public final class CloudStackClient {

    private static final Logger LOG = Logger.getLogger(CloudStackClient.class);

    private final CloudStackCredentials credentials;
    private final CloudStackClientSettings settings;
    private final HttpUrl apiUrl;
    private final OkHttpClient readHttp;
    private final OkHttpClient writeHttp;
    private final CloudStackApiMetrics metrics;
    private final Clock clock;
    private final Sleeper sleeper;
    private final DoubleSupplier jitter;
    private final SecretRedactor redactor;

    /** One command: what it is called, its own parameters, and whether it changes anything. */
    record ApiCall(String command, Map<String, String> params, boolean write) {
        static ApiCall read(String command, Map<String, String> params) {
            return new ApiCall(command, params, false);
        }

        static ApiCall write(String command, Map<String, String> params) {
            return new ApiCall(command, params, true);
        }
    }

    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            MeterRegistry registry, Clock clock, Sleeper sleeper) {
        this(credentials, settings, registry, clock, sleeper, () -> ThreadLocalRandom.current().nextDouble());
    }

    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            MeterRegistry registry, Clock clock, Sleeper sleeper, DoubleSupplier jitter) {
        this.credentials = credentials;
        this.settings = settings;
        this.apiUrl = HttpUrl.parse(credentials.apiUrl());
        if (apiUrl == null) {
            throw new IllegalArgumentException("CloudStack api-url is not an http(s) URL: " + credentials.apiUrl());
        }
        this.readHttp = CloudStackHttpClients.create(credentials, settings);
        this.writeHttp = CloudStackHttpClients.forWrites(readHttp);
        this.metrics = new CloudStackApiMetrics(registry);
        this.clock = clock;
        this.sleeper = sleeper;
        this.jitter = jitter;
        this.redactor = new SecretRedactor(credentials.apiKey(), credentials.secretKey());
    }

    public static CloudStackClient create(CloudStackCredentials credentials, MeterRegistry registry) {
        return new CloudStackClient(credentials, CloudStackClientSettings.DEFAULTS, registry, Clock.systemUTC(),
                Sleeper.REAL);
    }

    public CloudStackCredentials credentials() {
        return credentials;
    }

    // ---- Kubernetes clusters -------------------------------------------------------------

    public Optional<KubernetesCluster> findKubernetesCluster(String clusterId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", clusterId);
        addProjectOfCredentials(params);
        // listall makes admins and domain admins see clusters of other accounts too.
        params.put("listall", "true");
        return listAll("listKubernetesClusters", params, "kubernetescluster", KubernetesCluster.class)
                .stream().findFirst();
    }

    public List<KubernetesCluster> listKubernetesClusters(OwnerScope owner) {
        Map<String, String> params = new LinkedHashMap<>();
        owner.addTo(params);
        if (owner == OwnerScope.CALLER) {
            addProjectOfCredentials(params);
        }
        params.put("listall", "true");
        return listAll("listKubernetesClusters", params, "kubernetescluster", KubernetesCluster.class);
    }

    public List<KubernetesSupportedVersion> listKubernetesSupportedVersions() {
        return listAll("listKubernetesSupportedVersions", new LinkedHashMap<>(), "kubernetessupportedversion",
                KubernetesSupportedVersion.class);
    }

    /**
     * Scales down by removing exactly the given VMs (CloudStack 4.19+ {@code nodeids}); the job
     * destroys them and shrinks the cluster's size. Waits for the job.
     */
    public KubernetesCluster scaleKubernetesCluster(String clusterId, List<String> nodeIds) {
        AsyncJobResult job = runAsync(scaleCall(clusterId, nodeIds));
        return CloudStackResponses.jobEntity(job, "kubernetescluster", KubernetesCluster.class).orElse(null);
    }

    /**
     * The same scale-down, but returns the async job's id as soon as CloudStack accepted the command:
     * a caller that must not hold a thread for the whole job (a reconcile) records the id and polls
     * it with {@link #queryAsyncJob}.
     */
    public String startScaleKubernetesCluster(String clusterId, List<String> nodeIds) {
        ApiCall call = scaleCall(clusterId, nodeIds);
        return CloudStackResponses.jobId(execute(call), call.command());
    }

    private static ApiCall scaleCall(String clusterId, List<String> nodeIds) {
        if (nodeIds.isEmpty()) {
            throw new IllegalArgumentException("scaleKubernetesCluster needs at least one node id to remove");
        }
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", clusterId);
        params.put("nodeids", String.join(",", nodeIds));
        return ApiCall.write("scaleKubernetesCluster", params);
    }

    /** Drops VMs from the cluster's VM map without touching the VMs (for ExternalManaged clusters). */
    public void removeVirtualMachinesFromKubernetesCluster(String clusterId, List<String> vmIds) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", clusterId);
        params.put("virtualmachineids", String.join(",", vmIds));
        String command = "removeVirtualMachinesFromKubernetesCluster";
        JsonNode answer = execute(ApiCall.write(command, params));
        // The answer lists one entry per VM with "success"; a false one is a partial failure.
        for (JsonNode field : answer) {
            if (!field.isArray()) {
                continue;
            }
            for (JsonNode entry : field) {
                if (entry.has("success") && !entry.get("success").asBoolean()) {
                    throw new CloudStackException(Kind.API_ERROR, command, 200, null, null,
                            redactor.redact("VM " + entry.path("id").asText("?") + " was not removed from cluster "
                                    + clusterId + ": " + entry.path("displaytext").asText("")),
                            null, null);
                }
            }
        }
    }

    // ---- Virtual machines ----------------------------------------------------------------

    public List<VirtualMachine> listVirtualMachines(VmQuery query) {
        Map<String, String> params = new LinkedHashMap<>();
        query.owner().addTo(params);
        if (query.owner() == OwnerScope.CALLER) {
            addProjectOfCredentials(params);
        }
        if (query.listAll()) {
            params.put("listall", "true");
        }
        if (query.keyword() != null && !query.keyword().isBlank()) {
            params.put("keyword", query.keyword());
        }
        return listAll("listVirtualMachines", params, "virtualmachine", VirtualMachine.class);
    }

    /** Destroys and expunges a VM at once, so its name and IP are free again. Waits for the job. */
    public void destroyVirtualMachine(String vmId) {
        runAsync(destroyCall(vmId));
    }

    /** The same destroy and expunge, returning the async job's id without waiting (poll it with {@link #queryAsyncJob}). */
    public String startDestroyVirtualMachine(String vmId) {
        ApiCall call = destroyCall(vmId);
        return CloudStackResponses.jobId(execute(call), call.command());
    }

    private static ApiCall destroyCall(String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", vmId);
        params.put("expunge", "true");
        return ApiCall.write("destroyVirtualMachine", params);
    }

    /** Attaches the ISO to the VM as its CD-ROM; returns the async job's id without waiting (poll it with {@link #queryAsyncJob}). */
    public String startAttachIso(String isoId, String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", isoId);
        params.put("virtualmachineid", vmId);
        ApiCall call = ApiCall.write("attachIso", params);
        return CloudStackResponses.jobId(execute(call), call.command());
    }

    /** Detaches the VM's ISO; returns the async job's id without waiting (poll it with {@link #queryAsyncJob}). */
    public String startDetachIso(String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("virtualmachineid", vmId);
        ApiCall call = ApiCall.write("detachIso", params);
        return CloudStackResponses.jobId(execute(call), call.command());
    }

    // ---- Async jobs ----------------------------------------------------------------------

    /**
     * Polls queryAsyncJobResult until the job ends, waiting longer between polls up to the
     * configured maximum, and gives up at the configured job timeout (the job keeps running on
     * the server; the exception carries its id so a later reconcile can look again).
     */
    public AsyncJobResult waitForJob(String command, String jobId) {
        Instant deadline = clock.instant().plus(settings.asyncJobTimeout());
        Duration interval = settings.asyncJobInitialPollInterval();
        while (true) {
            AsyncJobResult job = queryAsyncJob(jobId);
            if (job.succeeded()) {
                return job;
            }
            if (job.failed()) {
                ApiError error = CloudStackResponses.jobError(job);
                metrics.recordError(command, error.errorCode());
                throw new CloudStackException(Kind.JOB_FAILED, command, 200, error.errorCode(), error.csErrorCode(),
                        redactor.redact(error.errorText()), jobId, null);
            }
            Instant now = clock.instant();
            if (!now.isBefore(deadline)) {
                throw new CloudStackException(Kind.JOB_TIMEOUT, command, 200, null, null,
                        "still pending after " + settings.asyncJobTimeout().toSeconds() + " s", jobId, null);
            }
            Duration untilDeadline = Duration.between(now, deadline);
            pause(command, untilDeadline.compareTo(interval) < 0 ? untilDeadline : interval);
            interval = interval.multipliedBy(2);
            if (interval.compareTo(settings.asyncJobMaxPollInterval()) > 0) {
                interval = settings.asyncJobMaxPollInterval();
            }
        }
    }

    /** One queryAsyncJobResult: the job as it is now (pending, succeeded or failed); never waits. */
    public AsyncJobResult queryAsyncJob(String jobId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("jobid", jobId);
        return CloudStackResponses.asyncJobResult(execute(ApiCall.read("queryAsyncJobResult", params)));
    }

    private AsyncJobResult runAsync(ApiCall call) {
        long startNanos = System.nanoTime();
        String jobId = CloudStackResponses.jobId(execute(call), call.command());
        LOG.debugf("CloudStack %s started job %s", call.command(), jobId);
        try {
            AsyncJobResult job = waitForJob(call.command(), jobId);
            metrics.recordJob(call.command(), CloudStackApiMetrics.SUCCESS, Duration.ofNanos(System.nanoTime() - startNanos));
            return job;
        } catch (CloudStackException failure) {
            metrics.recordJob(call.command(), CloudStackApiMetrics.outcomeOf(failure), Duration.ofNanos(System.nanoTime() - startNanos));
            throw failure;
        }
    }

    // ---- The one request path ------------------------------------------------------------

    private <T> List<T> listAll(String command, Map<String, String> filters, String entityKey, Class<T> type) {
        List<T> all = new ArrayList<>();
        int pageSize = settings.pageSize();
        for (int page = 1;; page++) {
            Map<String, String> params = new LinkedHashMap<>(filters);
            params.put("page", Integer.toString(page));
            params.put("pagesize", Integer.toString(pageSize));
            ListPage<T> result = CloudStackResponses.listPage(execute(ApiCall.read(command, params)), entityKey, type);
            all.addAll(result.items());
            if (!PagePlan.hasNextPage(pageSize, result.count(), result.items().size(), all.size())) {
                return all;
            }
        }
    }

    /**
     * Sends one command, retrying reads on transport errors, 5xx and 429, and writes only when
     * the request provably never left this process. Returns the {@code <command>response} object.
     */
    JsonNode execute(ApiCall call) {
        RetryPolicy policy = call.write() ? settings.unsentWriteRetry() : settings.readRetry();
        Instant started = clock.instant();
        long startNanos = System.nanoTime();
        for (int attempt = 1;; attempt++) {
            try {
                JsonNode answer = sendOnce(call);
                metrics.recordRequest(call.command(), CloudStackApiMetrics.SUCCESS, Duration.ofNanos(System.nanoTime() - startNanos));
                return answer;
            } catch (CloudStackException failure) {
                boolean mayRetry = call.write() ? failure.requestNeverSent()
                        : isTransientForReads(failure);
                Duration backoff = policy.backoffBefore(attempt, jitter);
                boolean withinBudget = attempt < policy.maxAttempts()
                        && Duration.between(started, clock.instant()).plus(backoff).compareTo(policy.maxTotalTime()) <= 0;
                if (!mayRetry || !withinBudget) {
                    metrics.recordRequest(call.command(), CloudStackApiMetrics.outcomeOf(failure),
                            Duration.ofNanos(System.nanoTime() - startNanos));
                    metrics.recordError(call.command(), failure.errorCode());
                    LOG.debugf("CloudStack %s failed after %d attempt(s): %s", call.command(), attempt, failure.getMessage());
                    throw failure;
                }
                metrics.recordRetry(call.command());
                LOG.warnf("CloudStack %s attempt %d of %d failed, retrying in %d ms: %s", call.command(), attempt,
                        policy.maxAttempts(), backoff.toMillis(), failure.getMessage());
                pause(call.command(), backoff);
            }
        }
    }

    private static boolean isTransientForReads(CloudStackException failure) {
        int status = failure.httpStatus();
        Integer code = failure.errorCode();
        return failure.kind() == Kind.TRANSPORT_ERROR
                || status >= 500 || status == 429
                || (code != null && code == CloudStackException.API_LIMIT_EXCEEDED);
    }

    private JsonNode sendOnce(ApiCall call) {
        Map<String, String> params = new LinkedHashMap<>(call.params());
        params.put("command", call.command());
        params.put("response", "json");
        params.put("apikey", credentials.apiKey());
        if (settings.signsWithExpiry()) {
            // The server refuses the request after "expires", so a leaked URL is only briefly useful.
            params.put("signatureversion", "3");
            params.put("expires", CloudStackTimestamps.format(clock.instant().plus(settings.signatureLifetime())));
        }
        String signature = RequestSigner.sign(params, credentials.secretKey());
        Request request = call.write() ? postRequest(params, signature) : getRequest(params, signature);
        OkHttpClient http = call.write() ? writeHttp : readHttp;
        long startNanos = System.nanoTime();
        int status;
        String body;
        try (Response response = http.newCall(request).execute()) {
            status = response.code();
            body = response.body().string();
        } catch (IOException e) {
            // The original exception is not attached: its message could name the request URL.
            CloudStackException failure = new CloudStackException(Kind.TRANSPORT_ERROR, call.command(),
                    CloudStackException.NO_HTTP_STATUS, null, null,
                    redactor.redact(e.getClass().getName() + ": " + e.getMessage()), null, null);
            if (TransportFailures.neverReachedServer(e)) {
                failure.markRequestNeverSent();
            }
            throw failure;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debugf("CloudStack %s %s %s -> HTTP %d in %d ms", request.method(), call.command(),
                    redactor.redact(call.params().toString()), status, (System.nanoTime() - startNanos) / 1_000_000);
        }
        return parseAnswer(call.command(), status, body);
    }

    private JsonNode parseAnswer(String command, int status, String body) {
        JsonNode envelope;
        try {
            envelope = CloudStackResponses.envelope(CloudStackResponses.MAPPER.readTree(body));
        } catch (IOException | IllegalArgumentException notCloudStackJson) {
            String snippet = body == null ? "" : body.substring(0, Math.min(200, body.length())).strip();
            throw new CloudStackException(Kind.HTTP_ERROR, command, status, null, null,
                    redactor.redact(status >= 300 && status < 400
                            ? "redirected; set api-url to the final URL of the API"
                            : "answer is not CloudStack JSON: " + snippet),
                    null, null);
        }
        Optional<ApiError> error = CloudStackResponses.error(envelope);
        if (error.isPresent()) {
            throw new CloudStackException(Kind.API_ERROR, command, status, error.get().errorCode(),
                    error.get().csErrorCode(), redactor.redact(error.get().errorText()), null, null);
        }
        if (status < 200 || status >= 300) {
            throw new CloudStackException(Kind.HTTP_ERROR, command, status, null, null, null, null, null);
        }
        return envelope;
    }

    private Request getRequest(Map<String, String> params, String signature) {
        StringBuilder query = new StringBuilder();
        params.forEach((name, value) -> query.append(name).append('=').append(RequestSigner.encodeValue(value)).append('&'));
        query.append(RequestSigner.SIGNATURE_PARAM).append('=').append(RequestSigner.encodeValue(signature));
        return new Request.Builder().url(apiUrl.newBuilder().encodedQuery(query.toString()).build()).get().build();
    }

    private Request postRequest(Map<String, String> params, String signature) {
        FormBody.Builder form = new FormBody.Builder();
        params.forEach(form::add);
        form.add(RequestSigner.SIGNATURE_PARAM, signature);
        return new Request.Builder().url(apiUrl).post(form.build()).build();
    }

    private void addProjectOfCredentials(Map<String, String> params) {
        if (credentials.projectId() != null) {
            params.put("projectid", credentials.projectId());
        }
    }

    private void pause(String command, Duration duration) {
        try {
            sleeper.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CloudStackException(Kind.TRANSPORT_ERROR, command, CloudStackException.NO_HTTP_STATUS, null,
                    null, "interrupted while waiting to retry or poll", null, e);
        }
    }
}
