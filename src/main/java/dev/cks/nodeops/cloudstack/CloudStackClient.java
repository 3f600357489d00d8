package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ApiError;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ListPage;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
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
    private final CloudStackClock cloudStackClock;
    /** Told each write's command right before it is sent: the leader's fence, which halts a replica that lost its Lease. */
    private final Consumer<String> beforeWrite;

    /** The random half of each backoff ({@link RetryPolicy#backoffBefore}) that keeps replicas out of lock step. */
    static final DoubleSupplier RANDOM_JITTER = () -> ThreadLocalRandom.current().nextDouble();

    /** How long listCapabilities' answer is trusted: the settings behind it can change at any time, but rarely do. */
    static final Duration CAPABILITIES_TTL = Duration.ofMinutes(10);

    /** One command with its own parameters; whether it is a write comes from the command. */
    record ApiCall(CloudStackCommand command, Map<String, String> params) {
        boolean write() {
            return command.isWrite();
        }

        String name() {
            return command.apiName();
        }
    }

    private CloudStackCapabilities capabilities;
    private Instant capabilitiesReadAt;

    /** How long what the keys may call is trusted: an admin can change the role at any time, but rarely does. */
    public static final Duration PERMISSIONS_TTL = Duration.ofMinutes(10);
    /** What the keys may call, as far as known, and since when: from listApis, a probe, or a 432 answer. */
    private final Map<CloudStackCommand, Permission> mayCall = new ConcurrentHashMap<>();

    private record Permission(boolean allowed, Instant learnedAt) {
    }

    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            MeterRegistry registry, Clock clock, Sleeper sleeper) {
        this(credentials, settings, registry, clock, sleeper, RANDOM_JITTER);
    }

    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            MeterRegistry registry, Clock clock, Sleeper sleeper, DoubleSupplier jitter) {
        this(credentials, settings, new CloudStackApiMetrics(registry), clock, sleeper, jitter);
    }

    /** @param metrics the process's one set of CloudStack metrics, which outlives a client built for the keys before a rotation */
    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            CloudStackApiMetrics metrics, Clock clock, Sleeper sleeper, DoubleSupplier jitter) {
        this(credentials, settings, metrics, clock, sleeper, jitter, command -> {
        });
    }

    /** @param beforeWrite told each write's command right before it is sent (LeaderFence) */
    public CloudStackClient(CloudStackCredentials credentials, CloudStackClientSettings settings,
            CloudStackApiMetrics metrics, Clock clock, Sleeper sleeper, DoubleSupplier jitter, Consumer<String> beforeWrite) {
        this.beforeWrite = beforeWrite;
        this.credentials = credentials;
        this.settings = settings;
        this.apiUrl = HttpUrl.parse(credentials.apiUrl());
        if (apiUrl == null) {
            throw new IllegalArgumentException("CloudStack api-url is not an http(s) URL: " + credentials.apiUrl());
        }
        this.readHttp = CloudStackHttpClients.create(credentials, settings);
        this.writeHttp = CloudStackHttpClients.forWrites(readHttp);
        this.metrics = metrics;
        this.clock = clock;
        this.sleeper = sleeper;
        this.jitter = jitter;
        this.redactor = new SecretRedactor(credentials.apiKey(), credentials.secretKey());
        this.cloudStackClock = metrics.cloudStackClock();
    }

    /**
     * Why this client's API URL is a risk, when it is plain http: CloudStack's answers (VM maps, job results)
     * and the signed requests cross the network unencrypted and unauthenticated, so anyone on the path can read
     * or change them. Empty for https.
     */
    public Optional<String> plainHttpWarning() {
        return apiUrl.isHttps() ? Optional.empty()
                : Optional.of("The CloudStack API URL " + credentials.apiUrl() + " is plain http: requests and CloudStack's answers cross the network"
                        + " unencrypted, and anyone on the path may read or change them. Set api-url in the CloudStack Secret to the management"
                        + " server's https URL.");
    }

    public static CloudStackClient create(CloudStackCredentials credentials, MeterRegistry registry) {
        return new CloudStackClient(credentials, CloudStackClientSettings.DEFAULTS, registry, Clock.systemUTC(),
                Sleeper.REAL);
    }

    public CloudStackCredentials credentials() {
        return credentials;
    }

    public CloudStackClientSettings settings() {
        return settings;
    }

    // ---- Kubernetes clusters -------------------------------------------------------------

    /** The cluster with this id, or empty when CloudStack has none (any more) that these keys may see. */
    public Optional<KubernetesCluster> findKubernetesCluster(String clusterId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", clusterId);
        addProjectOfCredentials(params);
        // listall makes admins and domain admins see clusters of other accounts too.
        params.put("listall", "true");
        return unlessUnknownId(() -> listAll(CloudStackCommand.LIST_KUBERNETES_CLUSTERS, params, "kubernetescluster",
                KubernetesCluster.class).stream().findFirst());
    }

    /** An id that never named anything is refused with 431, one of a deleted thing just lists nothing: both are "none". */
    private static <T> Optional<T> unlessUnknownId(java.util.function.Supplier<Optional<T>> lookup) {
        try {
            return lookup.get();
        } catch (CloudStackException e) {
            if (e.isUnknownId()) {
                return Optional.empty();
            }
            throw e;
        }
    }

    public List<KubernetesCluster> listKubernetesClusters(OwnerScope owner) {
        Map<String, String> params = new LinkedHashMap<>();
        owner.addTo(params);
        if (owner == OwnerScope.CALLER) {
            addProjectOfCredentials(params);
        }
        params.put("listall", "true");
        return listAll(CloudStackCommand.LIST_KUBERNETES_CLUSTERS, params, "kubernetescluster", KubernetesCluster.class);
    }

    public List<KubernetesSupportedVersion> listKubernetesSupportedVersions() {
        return listAll(CloudStackCommand.LIST_KUBERNETES_SUPPORTED_VERSIONS, new LinkedHashMap<>(), "kubernetessupportedversion",
                KubernetesSupportedVersion.class);
    }

    /**
     * Scales down by removing exactly the given VMs ({@code nodeids}); the job drains and destroys
     * them and shrinks the cluster's size. Waits for the job. CloudStack checks the request inside the
     * job (KubernetesClusterManagerImpl.validateKubernetesClusterScaleParameters), so a refusal is a
     * failed job, not an error answer.
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
        return startJob(scaleCall(clusterId, nodeIds));
    }

    private static ApiCall scaleCall(String clusterId, List<String> nodeIds) {
        return new ApiCall(CloudStackCommand.SCALE_KUBERNETES_CLUSTER, clusterAndNodes(clusterId, "nodeids", nodeIds));
    }

    /**
     * Removes nodes that were added to the cluster with addNodesToKubernetesCluster (CloudStack 4.21+
     * "external" nodes, which scaleKubernetesCluster's {@code nodeids} skip): CloudStack drains and
     * resets them and drops them from the VM map, but does not destroy the VMs. Returns the job's id.
     */
    public String startRemoveNodesFromKubernetesCluster(String clusterId, List<String> nodeIds) {
        return startJob(new ApiCall(CloudStackCommand.REMOVE_NODES_FROM_KUBERNETES_CLUSTER, clusterAndNodes(clusterId, "nodeids", nodeIds)));
    }

    /**
     * Drops VMs from the VM map of an ExternalManaged cluster without touching the VMs (a synchronous
     * command). A VM CloudStack reports as not (or no longer) in the map counts as dropped: that is
     * what a repeated call after a lost answer sees. Any other VM it could not drop is an error.
     *
     * <p>Drop a VM before expunging it: KubernetesClusterManagerImpl.removeVmsFromCluster looks the
     * mapped VM up without removed rows, so a map entry whose VM is already expunged fails the whole
     * call with an internal error.
     */
    public void removeVirtualMachinesFromKubernetesCluster(String clusterId, List<String> vmIds) {
        ApiCall call = new ApiCall(CloudStackCommand.REMOVE_VIRTUAL_MACHINES_FROM_KUBERNETES_CLUSTER,
                clusterAndNodes(clusterId, "virtualmachineids", vmIds));
        JsonNode answer = execute(call);
        // One entry per VM, in an array named after the command (ListResponse of SuccessResponse).
        for (JsonNode field : answer) {
            if (!field.isArray()) {
                continue;
            }
            for (JsonNode entry : field) {
                MapRemoval removal = new MapRemoval(entry.path("id").asText("?"), entry.path("success").asBoolean(true),
                        entry.path("displaytext").asText(""));
                if (!removal.dropped()) {
                    throw new CloudStackException(Kind.API_ERROR, call.name(), 200, null, null,
                            redactor.redact("VM " + removal.vmId() + " was not removed from cluster " + clusterId + ": "
                                    + removal.displayText()),
                            null, null);
                }
            }
        }
    }

    /** One VM of removeVirtualMachinesFromKubernetesCluster's answer. */
    record MapRemoval(String vmId, boolean success, String displayText) {
        /** KubernetesClusterManagerImpl.removeVmsFromCluster's texts for a VM that is not in the map (any more). */
        static final List<String> NOT_IN_MAP = List.of("VM is not part of the cluster", "VM is already removed", "Not a valid vm id");

        boolean dropped() {
            return success || NOT_IN_MAP.contains(displayText);
        }
    }

    private static Map<String, String> clusterAndNodes(String clusterId, String listParam, List<String> vmIds) {
        if (vmIds.isEmpty()) {
            throw new IllegalArgumentException("at least one VM id is needed for " + listParam);
        }
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", clusterId);
        params.put(listParam, String.join(",", vmIds));
        return params;
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
        return listAll(CloudStackCommand.LIST_VIRTUAL_MACHINES, params, "virtualmachine", VirtualMachine.class);
    }

    /**
     * One VM with its ISO ({@code details=iso}; a cluster's VM rows never carry it), or empty when
     * CloudStack lists no such VM in that scope: expunged VMs are not listed.
     */
    public Optional<VirtualMachine> findVirtualMachine(OwnerScope owner, String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        owner.addTo(params);
        if (owner == OwnerScope.CALLER) {
            addProjectOfCredentials(params);
        }
        params.put("id", vmId);
        params.put("details", "iso");
        params.put("listall", "true");
        return unlessUnknownId(() -> listAll(CloudStackCommand.LIST_VIRTUAL_MACHINES, params, "virtualmachine", VirtualMachine.class)
                .stream().filter(vm -> vmId.equals(vm.id())).findFirst());
    }

    /** Destroys a VM, expunging it at once when the key may (see {@link #capabilities()}). Waits for the job. */
    public void destroyVirtualMachine(String vmId) {
        runAsync(destroyCall(vmId));
    }

    /** The same destroy, returning the async job's id without waiting (poll it with {@link #queryAsyncJob}). */
    public String startDestroyVirtualMachine(String vmId) {
        return startJob(destroyCall(vmId));
    }

    /**
     * {@code expunge=true} frees the VM's name and IP at once, but UserVmManagerImpl refuses it in the
     * job for a key that is neither an admin's nor allowed by allow.user.expunge.recover.vm; without it
     * the VM stays Destroyed until CloudStack's expunge interval.
     */
    private ApiCall destroyCall(String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", vmId);
        if (capabilities().mayExpunge()) {
            params.put("expunge", "true");
        }
        return new ApiCall(CloudStackCommand.DESTROY_VIRTUAL_MACHINE, params);
    }

    public VirtualMachine attachIso(String isoId, String vmId) {
        AsyncJobResult job = runAsync(attachCall(isoId, vmId));
        return CloudStackResponses.jobEntity(job, "virtualmachine", VirtualMachine.class).orElse(null);
    }

    /**
     * Starts attaching an ISO; the finished job's {@code virtualmachine} carries the VM with its
     * {@code isoid}. CloudStack does not refuse a VM that already has an ISO: it swaps the CD-ROM.
     */
    public String startAttachIso(String isoId, String vmId) {
        return startJob(attachCall(isoId, vmId));
    }

    private static ApiCall attachCall(String isoId, String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("id", isoId);
        params.put("virtualmachineid", vmId);
        return new ApiCall(CloudStackCommand.ATTACH_ISO, params);
    }

    public VirtualMachine detachIso(String vmId) {
        AsyncJobResult job = runAsync(detachCall(vmId));
        return CloudStackResponses.jobEntity(job, "virtualmachine", VirtualMachine.class).orElse(null);
    }

    /**
     * Starts detaching the VM's ISO. A VM without one makes the job fail with
     * {@link CloudStackException#NO_ISO_ATTACHED} (see {@link CloudStackException#isNoIsoAttached()}).
     */
    public String startDetachIso(String vmId) {
        return startJob(detachCall(vmId));
    }

    private static ApiCall detachCall(String vmId) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("virtualmachineid", vmId);
        return new ApiCall(CloudStackCommand.DETACH_ISO, params);
    }

    // ---- What the key may do ---------------------------------------------------------------

    /**
     * listCapabilities, read at most every {@link #CAPABILITIES_TTL}. A key whose role may not call it
     * is treated as a plain user's ({@link CloudStackCapabilities#UNKNOWN}); other failures are not
     * cached, so the next call asks again.
     */
    public synchronized CloudStackCapabilities capabilities() {
        Instant now = clock.instant();
        if (capabilities != null && now.isBefore(capabilitiesReadAt.plus(CAPABILITIES_TTL))) {
            return capabilities;
        }
        CloudStackCapabilities read;
        try {
            JsonNode answer = execute(new ApiCall(CloudStackCommand.LIST_CAPABILITIES, new LinkedHashMap<>()));
            read = CloudStackResponses.entity(answer, "capability", CloudStackCapabilities.class).orElse(CloudStackCapabilities.UNKNOWN);
        } catch (CloudStackException e) {
            if (!e.isPermissionDenied()) {
                throw e;
            }
            LOG.infof("The CloudStack API key may not call listCapabilities (%s); VMs are destroyed without expunging them",
                    e.getMessage());
            read = CloudStackCapabilities.UNKNOWN;
        }
        capabilities = read;
        capabilitiesReadAt = now;
        return read;
    }

    /**
     * Which of these commands the keys may call, without side effects; a command absent from the answer is
     * unknown. Asked at most every {@link #PERMISSIONS_TTL}: first listApis, which lists exactly the commands the
     * caller's role allows (ApiDiscoveryServiceImpl.listApis filters every command through the role's checkers).
     * A role that does not allow listApis itself (the project "Kubernetes Service User" denies everything it
     * does not list) answers it 432; then each command is sent once without its required parameters:
     * ApiServer.verifyRequest refuses a command the role does not allow with 432 before anything else, and one it
     * allows is refused by ParamProcessWorker.processParameters (431, missing parameter) before it runs or its job
     * is queued (ApiServer.processAsyncCmd dispatches the parameters first). A list command is sent for one row.
     * Keys CloudStack refuses (401) or a failure to get an answer throw: nothing is known.
     */
    public synchronized Map<CloudStackCommand, Boolean> permissions(Collection<CloudStackCommand> commands) {
        if (commands.stream().anyMatch(command -> mayCall(command).isEmpty()) && mayCall(CloudStackCommand.LIST_APIS).orElse(true)) {
            readApiList();
        }
        Map<CloudStackCommand, Boolean> known = new EnumMap<>(CloudStackCommand.class);
        for (CloudStackCommand command : commands) {
            known.put(command, mayCall(command).orElseGet(() -> {
                boolean allowed = probe(command);
                learn(command, allowed);
                return allowed;
            }));
        }
        return known;
    }

    /**
     * Whether the keys may call this command, as far as it is known without asking (from {@link #permissions} or a
     * 432 answer within {@link #PERMISSIONS_TTL}); empty when unknown.
     */
    public Optional<Boolean> mayCall(CloudStackCommand command) {
        Permission permission = mayCall.get(command);
        if (permission == null || !clock.instant().isBefore(permission.learnedAt().plus(PERMISSIONS_TTL))) {
            return Optional.empty();
        }
        return Optional.of(permission.allowed());
    }

    private void learn(CloudStackCommand command, boolean allowed) {
        mayCall.put(command, new Permission(allowed, clock.instant()));
    }

    private void readApiList() {
        List<ApiName> listed;
        try {
            listed = CloudStackResponses.listPage(execute(new ApiCall(CloudStackCommand.LIST_APIS, new LinkedHashMap<>())), "api", ApiName.class)
                    .items();
        } catch (CloudStackException e) {
            if (!e.isUnsupportedAction()) {
                throw e;
            }
            return; // noted by execute; the commands are probed one by one
        }
        Set<String> names = new HashSet<>();
        listed.forEach(api -> names.add(api.name()));
        for (CloudStackCommand command : CloudStackCommand.values()) {
            learn(command, names.contains(command.apiName()));
        }
    }

    private boolean probe(CloudStackCommand command) {
        Map<String, String> params = new LinkedHashMap<>();
        if (command.apiName().startsWith("list") && command != CloudStackCommand.LIST_CAPABILITIES && command != CloudStackCommand.LIST_APIS) {
            params.put("page", "1");
            params.put("pagesize", "1");
        }
        try {
            execute(new ApiCall(command, params));
            return true;
        } catch (CloudStackException e) {
            if (e.isUnsupportedAction()) {
                return false;
            }
            if (e.kind() != Kind.API_ERROR || e.isAuthenticationFailure()) {
                throw e;
            }
            return true; // refused for its parameters: the role let it through
        }
    }

    /** One row of listApis' answer: only the name is read. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record ApiName(@JsonProperty("name") String name) {
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
        return redacted(CloudStackResponses.asyncJobResult(execute(new ApiCall(CloudStackCommand.QUERY_ASYNC_JOB_RESULT, params))));
    }

    /**
     * A failed job's error text goes to statuses and events as it is: redacted here like every other text
     * of this client, so a server (or proxy) that echoes a request's key or signature leaks nothing.
     */
    private AsyncJobResult redacted(AsyncJobResult job) {
        if (job.failed() && job.jobResult() instanceof com.fasterxml.jackson.databind.node.ObjectNode result && result.hasNonNull("errortext")) {
            result.put("errortext", redactor.redact(result.get("errortext").asText()));
        }
        return job;
    }

    /**
     * The async jobs the key's account may see, created at or after {@code since} by CloudStack's clock
     * ({@link #cloudStackClock}), with their commands: how a write whose answer was lost is found
     * ({@link LostAnswer}). They are the account's, not the key's (QueryManagerImpl.searchForAsyncJobsInternal):
     * other users' and other clusters' jobs are among them. ListAsyncJobsCmd's {@code startdate} is a day in
     * the server's time zone (ParamProcessWorker parses it as yyyy-MM-dd), so a day earlier is asked for and
     * the rest filtered here.
     */
    public List<AsyncJobResult> listAsyncJobs(Instant since) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("startdate", DateTimeFormatter.ISO_LOCAL_DATE.format(since.minus(Duration.ofDays(1)).atOffset(ZoneOffset.UTC)));
        return listAll(CloudStackCommand.LIST_ASYNC_JOBS, params, "asyncjobs", AsyncJobResult.class).stream().map(this::redacted)
                .filter(job -> CloudStackTimestamps.parse(job.created()).map(created -> !created.isBefore(since)).orElse(true))
                .toList();
    }

    private String startJob(ApiCall call) {
        return CloudStackResponses.jobId(execute(call), call.name());
    }

    private AsyncJobResult runAsync(ApiCall call) {
        long startNanos = System.nanoTime();
        String jobId = startJob(call);
        LOG.debugf("CloudStack %s started job %s", call.name(), jobId);
        try {
            AsyncJobResult job = waitForJob(call.name(), jobId);
            metrics.recordJob(call.name(), CloudStackApiMetrics.SUCCESS, Duration.ofNanos(System.nanoTime() - startNanos));
            return job;
        } catch (CloudStackException failure) {
            metrics.recordJob(call.name(), CloudStackApiMetrics.outcomeOf(failure), Duration.ofNanos(System.nanoTime() - startNanos));
            throw failure;
        }
    }

    /** CloudStack's clock as this process has measured it from CloudStack's answers. */
    public CloudStackClock cloudStackClock() {
        return cloudStackClock;
    }

    // ---- The one request path ------------------------------------------------------------

    private <T> List<T> listAll(CloudStackCommand command, Map<String, String> filters, String entityKey, Class<T> type) {
        List<T> all = new ArrayList<>();
        int pageSize = settings.pageSize();
        for (int page = 1;; page++) {
            Map<String, String> params = new LinkedHashMap<>(filters);
            params.put("page", Integer.toString(page));
            params.put("pagesize", Integer.toString(pageSize));
            ListPage<T> result = CloudStackResponses.listPage(execute(new ApiCall(command, params)), entityKey, type);
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
                JsonNode answer = sendSigned(call);
                metrics.recordRequest(call.name(), CloudStackApiMetrics.SUCCESS, Duration.ofNanos(System.nanoTime() - startNanos));
                return answer;
            } catch (CloudStackException failure) {
                boolean mayRetry = call.write() ? failure.requestNeverSent()
                        : isTransientForReads(failure);
                Duration backoff = policy.backoffBefore(attempt, jitter);
                boolean withinBudget = attempt < policy.maxAttempts()
                        && Duration.between(started, clock.instant()).plus(backoff).compareTo(policy.maxTotalTime()) <= 0;
                if (failure.isUnsupportedAction()) {
                    learn(call.command(), false);
                }
                if (!mayRetry || !withinBudget) {
                    metrics.recordRequest(call.name(), CloudStackApiMetrics.outcomeOf(failure),
                            Duration.ofNanos(System.nanoTime() - startNanos));
                    metrics.recordError(call.name(), failure.errorCode());
                    LOG.debugf("CloudStack %s failed after %d attempt(s): %s", call.name(), attempt, failure.getMessage());
                    throw failure;
                }
                metrics.recordRetry(call.name());
                LOG.warnf("CloudStack %s attempt %d of %d failed, retrying in %d ms: %s", call.name(), attempt,
                        policy.maxAttempts(), backoff.toMillis(), failure.getMessage());
                pause(call.name(), backoff);
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

    /**
     * One request, signed to expire by CloudStack's clock. CloudStack answers an expired signature exactly as
     * wrong keys (401, ApiServer.verifyRequest), so after a 401 its clock is measured: if it is elsewhere than
     * the request was signed for, the request is signed again and sent once more (refused before anything
     * else, the first did nothing); otherwise the refusal stands, naming a skewed clock if there is one.
     */
    private JsonNode sendSigned(ApiCall call) {
        Duration signedFor = cloudStackClock.offset();
        try {
            return sendOnce(call, expiry());
        } catch (CloudStackException failure) {
            if (!failure.isAuthenticationFailure() || !settings.signsWithExpiry()) {
                throw failure;
            }
            measureClock();
            if (cloudStackClock.offset().minus(signedFor).abs().compareTo(CloudStackClock.TOLERANCE) > 0) {
                LOG.warnf("CloudStack refused %s as unauthenticated: it was signed for a clock %s; signing it again for CloudStack's clock",
                        call.name(), cloudStackClock.skew().map(skew -> "other than CloudStack's (" + skew + ")").orElse("CloudStack no longer has"));
                return sendOnce(call, expiry());
            }
            throw cloudStackClock.skew().map(skew -> new CloudStackException(failure.kind(), call.name(), failure.httpStatus(), failure.errorCode(),
                    failure.csErrorCode(), failure.getMessage() + " (" + skew + "; requests are signed for CloudStack's clock)", null, null))
                    .orElse(failure);
        }
    }

    /** When a request signed now expires, by CloudStack's clock; null when signing without expiry. */
    private Instant expiry() {
        return settings.signsWithExpiry() ? cloudStackClock.toCloudStack(clock.instant()).plus(settings.signatureLifetime()) : null;
    }

    /** How far either way CloudStack's clock is looked for. */
    static final Duration CLOCK_SEARCH_SPAN = Duration.ofDays(1);
    /** How long a measurement of CloudStack's clock is trusted before a write measures it again. */
    static final Duration CLOCK_TRUSTED_FOR = Duration.ofHours(1);

    /** {@link #measureClock} unless it was measured within {@link #CLOCK_TRUSTED_FOR}. */
    public void measureClockIfStale() {
        measureClockUnlessMeasuredSince(clock.instant().minus(CLOCK_TRUSTED_FOR));
    }

    /** {@link #measureClock} unless it was measured at or after {@code since} (our clock). */
    public void measureClockUnlessMeasuredSince(Instant since) {
        Instant measuredAt = cloudStackClock.measuredAt();
        if (measuredAt == null || measuredAt.isBefore(since)) {
            measureClock();
        }
    }

    /**
     * Measures CloudStack's clock as CloudStack applies it to signatures: a request whose {@code expires} lies
     * before CloudStack's now is refused 401, one at or after it passes the check (ApiServer.verifyRequest;
     * any other answer, a 432 for a role without the command included, means the signature passed). A
     * bisection of {@code expires} over a day either way finds CloudStack's now to two seconds in about 17
     * listCapabilities requests, each signed to expire. Keys CloudStack refuses outright leave it unmeasured;
     * nothing is measured when signing without expiry.
     */
    public synchronized void measureClock() {
        if (!settings.signsWithExpiry()) {
            return;
        }
        Instant from = clock.instant();
        Instant early = from.minus(CLOCK_SEARCH_SPAN);
        Instant late = from.plus(CLOCK_SEARCH_SPAN);
        if (!takesExpiry(late) || takesExpiry(early)) {
            LOG.warn("CloudStack's clock could not be measured: it refuses the keys, or runs more than a day from this operator's");
            return;
        }
        while (Duration.between(early, late).compareTo(Duration.ofSeconds(2)) > 0) {
            Instant middle = early.plus(Duration.between(early, late).dividedBy(2)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
            if (takesExpiry(middle)) {
                late = middle;
            } else {
                early = middle;
            }
        }
        cloudStackClock.observe(early.plus(Duration.between(early, late).dividedBy(2)), from, clock.instant());
        cloudStackClock.skew().ifPresent(skew -> LOG.warnf("%s; requests are signed for CloudStack's clock", skew));
    }

    private boolean takesExpiry(Instant expires) {
        try {
            sendOnce(new ApiCall(CloudStackCommand.LIST_CAPABILITIES, new LinkedHashMap<>()), expires);
            return true;
        } catch (CloudStackException refused) {
            if (refused.kind() == Kind.TRANSPORT_ERROR) {
                throw refused;
            }
            return !refused.isAuthenticationFailure();
        }
    }

    /** @param expires when CloudStack should refuse it, by its clock; null: signed without expiry */
    private JsonNode sendOnce(ApiCall call, Instant expires) {
        Map<String, String> params = new LinkedHashMap<>(call.params());
        params.put("command", call.name());
        params.put("response", "json");
        params.put("apikey", credentials.apiKey());
        if (expires != null) {
            // The server refuses the request after "expires", so a leaked URL is only briefly useful.
            params.put("signatureversion", "3");
            params.put("expires", CloudStackTimestamps.format(expires));
        }
        String signature = RequestSigner.sign(params, credentials.secretKey());
        if (call.write()) {
            beforeWrite.accept(call.name());
        }
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
            CloudStackException failure = new CloudStackException(Kind.TRANSPORT_ERROR, call.name(),
                    CloudStackException.NO_HTTP_STATUS, null, null,
                    redactor.redact(e.getClass().getName() + ": " + e.getMessage()), null, null);
            if (TransportFailures.neverReachedServer(e)) {
                failure.markRequestNeverSent();
            }
            throw failure;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debugf("CloudStack %s %s %s -> HTTP %d in %d ms", request.method(), call.name(),
                    redactor.redact(call.params().toString()), status, (System.nanoTime() - startNanos) / 1_000_000);
        }
        return parseAnswer(call.name(), status, body);
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
