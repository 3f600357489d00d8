package dev.cks.nodeops.cloudstack.simulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.cks.nodeops.cloudstack.CloudStackCredentials;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * An in-process CloudStack management server for tests and demos, on 127.0.0.1 and an ephemeral
 * port. It checks signatures as ApiServer.verifyRequest does (its own implementation, so it also
 * checks the client's signer), keeps accounts, projects, CKS clusters with their VM map, VMs,
 * supported versions and attached ISOs, runs async jobs that finish after a planned number of
 * polls, pages like the server, injects faults per command and records every call.
 *
 * <p>Every answer the operator relies on mirrors Apache CloudStack's source; docs/cloudstack-simulator.md
 * has the table of which file and method each one follows and which test pins it. What CloudStack
 * checks synchronously (parameter translation, the role's API list, the command class's own checks)
 * is an error answer; what its command runs inside the async job (the KubernetesCluster manager's and
 * UserVmManager's validations) is a failed job, as ApiAsyncJobDispatcher.runJob records it.
 */
public final class CloudStackSimulator implements AutoCloseable {

    public static final String API_PATH = "/client/api";
    public static final String ZONE_ID = "5f2d7e3a-0d1b-4c55-9a36-1c2f0e9b7a01";
    public static final String ZONE_NAME = "sim-zone";
    public static final String ROOT_DOMAIN_ID = "f0ff6ce4-ba19-11ec-bdce-1e000700021c";
    static final String TEMPLATE_ID = "7a4c26f2-6b2c-4b8e-9d0a-2f6e1c3d4b5a";
    static final String SERVICE_OFFERING_ID = "c0a1d9e8-3f4b-4c2d-8e7f-6a5b4c3d2e1f";

    private static final DateTimeFormatter CLOUDSTACK_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ssZ");
    private static final Set<String> NOT_RECORDED = Set.of("apikey", "signature", "expires", "signatureversion",
            "response", "command");

    private final ObjectMapper json = new ObjectMapper();
    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private final AtomicLong idSequence = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();

    private final Map<String, SimulatedAccount> accountsByApiKey = new ConcurrentHashMap<>();
    private final Map<String, SimulatedProject> projects = new ConcurrentHashMap<>();
    private final Map<String, SimulatedVm> vms = new LinkedHashMap<>();
    /** VMs expunged: gone from every list, but their ids still translate, as findByUuidIncludingRemoved does. */
    private final Set<String> expungedVmIds = ConcurrentHashMap.newKeySet();
    /** Accounts (by {@link SimulatedAccount#accountKey}) whose role allows only some APIs (DynamicRoleBasedAPIAccessChecker); absent = all. */
    private final Map<String, Set<String>> allowedApisByAccount = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> listedApisByAccount = new ConcurrentHashMap<>();
    /** Accounts with allow.user.expunge.recover.vm set (an account-scoped setting). */
    private final Set<String> userExpungeAllowedAccounts = ConcurrentHashMap.newKeySet();
    private final Map<String, SimulatedCluster> clusters = new LinkedHashMap<>();
    private final Map<String, SimulatedVersion> versions = new LinkedHashMap<>();
    private final Map<String, SimulatedJob> jobs = new ConcurrentHashMap<>();
    /** job.expire.minutes' default (AsyncJobManagerImpl.JobExpireMinutes). */
    static final Duration JOB_EXPIRY = Duration.ofMinutes(1440);
    private final Map<String, Queue<Fault>> faults = new ConcurrentHashMap<>();
    private final Queue<TargetedFault> targetedFaults = new ConcurrentLinkedQueue<>();
    private final Map<String, Queue<JobOutcome>> plannedJobs = new ConcurrentHashMap<>();
    private final List<RecordedCall> calls = new CopyOnWriteArrayList<>();
    private final SimulatedAccount defaultAccount;
    private volatile JobOutcome defaultJobOutcome = JobOutcome.succeedsAfterPolls(1);
    private volatile String cloudStackVersion = "4.21.0.0";
    private volatile IsoDrive isoDrive = IsoDrive.NONE;
    /** How far the management server's clock is from {@link #clock} (negative: behind). */
    private volatile Duration clockShift = Duration.ZERO;

    private static final class SimulatedJob {
        final String id;
        final String command;
        final SimulatedAccount owner;
        final String instanceType;
        final String instanceId;
        final JobOutcome outcome;
        final Runnable effect;
        final Supplier<ObjectNode> result;
        final Runnable onFailure;
        final Instant started;
        int polls;
        int status;
        ObjectNode jobResult;
        Instant completed;

        SimulatedJob(String id, String command, SimulatedAccount owner, String instanceType, String instanceId, JobOutcome outcome,
                Runnable effect, Supplier<ObjectNode> result, Runnable onFailure, Instant started) {
            this.id = id;
            this.owner = owner;
            this.instanceType = instanceType;
            this.instanceId = instanceId;
            this.started = started;
            this.onFailure = onFailure;
            this.command = command;
            this.outcome = outcome;
            this.effect = effect;
            this.result = result;
        }
    }

    private CloudStackSimulator(InetAddress address, int port, Clock clock) throws IOException {
        this.clock = clock;
        this.server = HttpServer.create(new InetSocketAddress(address, port), 0);
        this.executor = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "cloudstack-simulator");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext(API_PATH, this::handle);
        this.defaultAccount = addAccount("admin", ROOT_DOMAIN_ID, "sim-api-key-" + newId(), "sim-secret-key-" + newId(), true);
        server.start();
    }

    public static CloudStackSimulator start() {
        return start(0, Clock.systemUTC());
    }

    /** Port 0 picks a free one; the clock decides signature expiry and creation times. */
    public static CloudStackSimulator start(int port, Clock clock) {
        return start(InetAddress.getLoopbackAddress(), port, clock);
    }

    /** On another address of this machine, e.g. the real test node's bridge, which pods can reach. */
    public static CloudStackSimulator start(InetAddress address, int port, Clock clock) {
        try {
            return new CloudStackSimulator(address, port, clock);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the CloudStack simulator on port " + port, e);
        }
    }

    public String apiUrl() {
        return "http://" + server.getAddress().getAddress().getHostAddress() + ":" + server.getAddress().getPort() + API_PATH;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    // ---- Seeding ---------------------------------------------------------------------------

    public SimulatedAccount defaultAccount() {
        return defaultAccount;
    }

    /** Credentials of the default (admin) account for this simulator's URL. */
    public CloudStackCredentials credentials() {
        return credentials(defaultAccount);
    }

    public CloudStackCredentials credentials(SimulatedAccount account) {
        return CloudStackCredentials.of(apiUrl(), account.apiKey(), account.secretKey());
    }

    public SimulatedAccount addAccount(String name, String domainId, String apiKey, String secretKey, boolean admin) {
        SimulatedAccount account = new SimulatedAccount(name, domainId, domainId.equals(ROOT_DOMAIN_ID) ? "ROOT" : "sub",
                apiKey, secretKey, admin, name);
        accountsByApiKey.put(apiKey, account);
        return account;
    }

    /**
     * Another user of {@code account} with its own key pair (a second CKS cluster's key, the UI's user):
     * the account's resources, jobs, role and settings are shared, only the key and the user differ.
     */
    public SimulatedAccount addUser(SimulatedAccount account, String userName) {
        SimulatedAccount user = new SimulatedAccount(account.name(), account.domainId(), account.domainName(),
                "sim-api-key-" + newId(), "sim-secret-key-" + newId(), account.admin(), userName);
        accountsByApiKey.put(user.apiKey(), user);
        return user;
    }

    /**
     * The account's role allows only these APIs; any other answers 432 as DynamicRoleBasedAPIAccessChecker
     * does, and listApis lists exactly these. The role is the account's, so every user of the account is
     * restricted alike.
     */
    public void restrictApis(SimulatedAccount account, Set<String> apiNames) {
        Set<String> lower = new HashSet<>();
        apiNames.forEach(name -> lower.add(name.toLowerCase(Locale.ROOT)));
        allowedApisByAccount.put(account.accountKey(), Set.copyOf(lower));
        listedApisByAccount.put(account.accountKey(), new TreeSet<>(apiNames));
    }

    /**
     * The role CloudStack gives the service account of a project's Kubernetes clusters ("Kubernetes Service User",
     * whose keys CKS puts in a project cluster's cloudstack-secret since 4.19.3/4.20.1): an allow rule for each
     * command of KubernetesClusterManagerImpl.PROJECT_KUBERNETES_ACCOUNT_ROLE_ALLOWED_APIS, then "*" denied
     * (createProjectKubernetesAccountRole). Read in apache/cloudstack
     * plugins/integrations/kubernetes-service/src/main/java/com/cloud/kubernetes/cluster/KubernetesClusterManagerImpl.java
     * at b5ab951cf8e67918ff5ee7f23d88c2a08e6db685 (main after 4.22); the names are the commands' APICommand names
     * (BaseCmd.getCommandNameByClass). listApis is not among them: the role answers it 432 too.
     */
    public static final Set<String> PROJECT_KUBERNETES_SERVICE_ROLE = Set.of("queryAsyncJobResult", "listVirtualMachines", "listNetworks",
            "listPublicIpAddresses", "associateIpAddress", "disassociateIpAddress", "listLoadBalancerRules", "createLoadBalancerRule",
            "updateLoadBalancerRule", "deleteLoadBalancerRule", "assignToLoadBalancerRule", "removeFromLoadBalancerRule",
            "listLoadBalancerRuleInstances", "listFirewallRules", "createFirewallRule", "updateFirewallRule", "deleteFirewallRule",
            "listNetworkACLs", "createNetworkACL", "deleteNetworkACL", "listKubernetesClusters", "scaleKubernetesCluster");

    /** The account's keys are those of a project cluster's "Kubernetes Service User" ({@link #PROJECT_KUBERNETES_SERVICE_ROLE}). */
    public void playProjectKubernetesServiceRole(SimulatedAccount account) {
        restrictApis(account, PROJECT_KUBERNETES_SERVICE_ROLE);
    }

    /** allow.user.expunge.recover.vm for a non-admin account (admins may always expunge). */
    public void allowUserExpunge(SimulatedAccount account, boolean allowed) {
        if (allowed) {
            userExpungeAllowedAccounts.add(account.accountKey());
        } else {
            userExpungeAllowedAccounts.remove(account.accountKey());
        }
    }

    /**
     * The management server's clock runs this far from the clock the simulator was started with
     * (negative: behind), replacing any earlier shift. Everything the server dates or checks uses it:
     * jobs' {@code created} and {@code completed}, new VMs and clusters, the signature's {@code expires}
     * (ApiServer.verifyRequest compares it with the server's own time) and job expiry. Not the HTTP
     * {@code Date} header: the JDK's HttpServer sets one on every answer from the JVM's own clock
     * (CloudStack's Jetty sends none, see docs/cloudstack-simulator.md, "Known differences").
     */
    public void shiftClock(Duration offset) {
        this.clockShift = offset;
    }

    /** The management server's time: the simulator's clock plus {@link #shiftClock}. */
    public Instant now() {
        return clock.instant().plus(clockShift);
    }

    /** Where attachIso and detachIso put the ISO of a Running VM besides the record (see {@link IsoDrive}). */
    public void useIsoDrive(IsoDrive drive) {
        this.isoDrive = drive;
    }

    /** What listCapabilities reports as cloudstackversion; null hides it (expose.cloudstack.version.api.list.capabilities=false). */
    public void setCloudStackVersion(String version) {
        this.cloudStackVersion = version;
    }

    public SimulatedProject addProject(String name) {
        SimulatedProject project = new SimulatedProject(newId(), name, defaultAccount.domainId(), "PrjAcct-" + name + "-" + idSequence.get());
        projects.put(project.id(), project);
        return project;
    }

    public synchronized SimulatedVersion addSupportedVersion(String semanticVersion) {
        SimulatedVersion version = new SimulatedVersion(newId(), "v" + semanticVersion, semanticVersion, newId(),
                "v" + semanticVersion + "-Kubernetes-Binaries-ISO", "Ready", "Enabled");
        versions.put(version.id(), version);
        return version;
    }

    public synchronized SimulatedVersion addSupportedVersion(SimulatedVersion version) {
        versions.put(version.id(), version);
        return version;
    }

    /** An empty, Running cluster; add nodes with {@link #addClusterVm}. */
    public synchronized SimulatedCluster addCluster(String name, Owner owner, String clusterType, String versionId) {
        SimulatedCluster cluster = new SimulatedCluster(newId(), name, owner, clusterType, versionId, now());
        clusters.put(cluster.id(), cluster);
        return cluster;
    }

    /** A CloudManaged cluster of the default account with nodes named like CKS names them. */
    public synchronized SimulatedCluster addCluster(String name, int controlNodes, int workers) {
        return addCluster(name, Owner.of(defaultAccount), controlNodes, workers);
    }

    /** A CloudManaged cluster on the first supported version (one is added if there is none). */
    public synchronized SimulatedCluster addCluster(String name, Owner owner, int controlNodes, int workers) {
        String versionId = versions.isEmpty() ? addSupportedVersion("1.33.1").id() : versions.keySet().iterator().next();
        SimulatedCluster cluster = addCluster(name, owner, "CloudManaged", versionId);
        for (int i = 0; i < controlNodes; i++) {
            addClusterVm(cluster, name + "-control-" + shortHex(), NodeRole.CONTROL);
        }
        for (int i = 0; i < workers; i++) {
            addClusterVm(cluster, name + "-node-" + shortHex(), NodeRole.WORKER);
        }
        return cluster;
    }

    public synchronized SimulatedVm addVm(String name, Owner owner) {
        SimulatedVm vm = new SimulatedVm(newId(), name, owner, now(), "kvm-host-" + (vms.size() % 4 + 1), "Running");
        vms.put(vm.id(), vm);
        return vm;
    }

    /** A node CKS provisioned; its map row records the cluster's version, as CloudStack does for the nodes it creates. */
    public synchronized SimulatedVm addClusterVm(SimulatedCluster cluster, String name, NodeRole role) {
        SimulatedVm vm = addVm(name, cluster.owner());
        vm.setCluster(cluster.id(), role);
        SimulatedVersion version = versions.get(cluster.versionId());
        vm.setNodeVersion(version == null ? null : version.semanticVersion());
        cluster.addToMap(vm.id(), role);
        return vm;
    }

    /** A worker added with addNodesToKubernetesCluster (4.21+): in the map and counted, flagged as external. */
    public synchronized SimulatedVm addExternalNode(SimulatedCluster cluster, String name) {
        SimulatedVm vm = addClusterVm(cluster, name, NodeRole.WORKER);
        vm.setExternalNode(true);
        return vm;
    }

    /** Marks a cluster VM as added with addNodesToKubernetesCluster (or not), as a later CloudStack version may list it. */
    public synchronized void setExternalNode(String vmId, boolean external) {
        vm(vmId).setExternalNode(external);
    }

    /** What CloudStack has recorded as the node's Kubernetes version (its own upgrade updates it; ours does not). */
    public synchronized void setRecordedNodeVersion(String vmId, String version) {
        vm(vmId).setNodeVersion(version);
    }

    public synchronized void setAutoscaling(String clusterId, boolean enabled, Long minSize, Long maxSize) {
        cluster(clusterId).setAutoscaling(enabled, minSize, maxSize);
    }

    public synchronized void setVmState(String vmId, String state) {
        vm(vmId).setState(state);
    }

    public synchronized void setClusterState(String clusterId, String state) {
        cluster(clusterId).setState(state);
    }

    /** Destroys a VM behind CKS's back: the cluster's VM map keeps its entry, as on a real server. */
    public synchronized void destroyVm(String vmId, boolean expunge) {
        if (expunge) {
            expunge(vmId);
        } else {
            vm(vmId).setState("Destroyed");
        }
    }

    /**
     * An admin's repair of a CloudManaged cluster that lost a VM behind CKS's back (CloudStack has
     * no API for it, so it is done in the database): the map entry goes and the cluster stops
     * counting the VM. The role is given because an expunged VM is no longer there to ask.
     */
    public synchronized void repairClusterMap(String clusterId, String vmId, NodeRole role) {
        SimulatedCluster cluster = cluster(clusterId);
        if (!cluster.removeFromMap(vmId)) {
            throw new IllegalArgumentException("VM " + vmId + " is not in the map of cluster " + cluster.name());
        }
        cluster.uncount(role);
        findVm(vmId).ifPresent(vm -> vm.setCluster(null, NodeRole.NONE));
    }

    public synchronized SimulatedVm vm(String vmId) {
        SimulatedVm vm = vms.get(vmId);
        if (vm == null) {
            throw new IllegalArgumentException("no simulated VM " + vmId);
        }
        return vm;
    }

    public synchronized Optional<SimulatedVm> findVm(String vmId) {
        return Optional.ofNullable(vms.get(vmId));
    }

    public synchronized SimulatedCluster cluster(String clusterId) {
        SimulatedCluster cluster = clusters.get(clusterId);
        if (cluster == null) {
            throw new IllegalArgumentException("no simulated cluster " + clusterId);
        }
        return cluster;
    }

    /** The commands of the simulator's async jobs, running or finished (not yet expunged), oldest first. */
    public synchronized List<String> jobCommands() {
        return jobs.values().stream().sorted(Comparator.comparing(job -> job.started)).map(job -> job.command).toList();
    }

    public synchronized List<SimulatedVm> clusterVms(String clusterId) {
        return cluster(clusterId).vmIds().stream().map(vms::get).filter(vm -> vm != null).toList();
    }

    // ---- Faults, jobs and recorded calls -----------------------------------------------------

    /** The next requests of {@code command} meet these faults, one each, in order. */
    /** Every fault not yet played is dropped: CloudStack answers again. */
    public void clearFaults() {
        faults.clear();
        targetedFaults.clear();
    }

    public void injectFault(String command, Fault... injected) {
        Queue<Fault> queue = faults.computeIfAbsent(command.toLowerCase(Locale.ROOT), key -> new ConcurrentLinkedQueue<>());
        queue.addAll(List.of(injected));
    }

    /**
     * The next requests of {@code command} whose {@code parameter} is {@code value} (one VM's attachIso, say)
     * meet these faults, one each, in order; they are met before the faults queued for the command alone.
     */
    public void injectFault(String command, String parameter, String value, Fault... injected) {
        for (Fault fault : injected) {
            targetedFaults.add(new TargetedFault(command.toLowerCase(Locale.ROOT), parameter.toLowerCase(Locale.ROOT), value, fault));
        }
    }

    private record TargetedFault(String command, String parameter, String value, Fault fault) {
    }

    private Fault nextFault(String command, Map<String, String> params) {
        String lower = command.toLowerCase(Locale.ROOT);
        for (TargetedFault targeted : targetedFaults) {
            if (targeted.command().equals(lower) && targeted.value().equals(params.get(targeted.parameter())) && targetedFaults.remove(targeted)) {
                return targeted.fault();
            }
        }
        Queue<Fault> queue = faults.get(lower);
        return queue == null ? null : queue.poll();
    }

    /** The next async jobs of {@code command} end like this, one each; unplanned jobs succeed on the first poll. */
    public void planJob(String command, JobOutcome... outcomes) {
        plannedJobs.computeIfAbsent(command.toLowerCase(Locale.ROOT), key -> new ConcurrentLinkedQueue<>())
                .addAll(List.of(outcomes));
    }

    /** How jobs end that have no planned outcome; the demo uses a few seconds to look realistic. */
    public void setDefaultJobOutcome(JobOutcome outcome) {
        this.defaultJobOutcome = outcome;
    }

    public List<RecordedCall> calls() {
        return List.copyOf(calls);
    }

    public List<RecordedCall> calls(String command) {
        return calls.stream().filter(call -> call.command().equalsIgnoreCase(command)).toList();
    }

    public void clearCalls() {
        calls.clear();
    }

    // ---- HTTP ------------------------------------------------------------------------------

    /** Requests being handled now (a slow answer still sleeping, for one): a test waits for them before looking. */
    public int requestsInFlight() {
        return inFlight.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        inFlight.incrementAndGet();
        try (exchange) {
            Map<String, String> params = new LinkedHashMap<>();
            parseInto(params, exchange.getRequestURI().getRawQuery());
            if ("POST".equals(exchange.getRequestMethod())) {
                parseInto(params, new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            }
            Map<String, String> lower = new HashMap<>();
            params.forEach((name, value) -> lower.put(name.toLowerCase(Locale.ROOT), value));
            String command = lower.getOrDefault("command", "");
            Optional<SimulatedAccount> caller = verifiedCaller(params, lower);
            Map<String, String> recorded = new LinkedHashMap<>();
            lower.forEach((name, value) -> {
                if (!NOT_RECORDED.contains(name)) {
                    recorded.put(name, value);
                }
            });
            calls.add(new RecordedCall(exchange.getRequestMethod(), command, Map.copyOf(recorded), caller.isPresent()));

            Fault fault = nextFault(command, lower);
            if (fault instanceof Fault.DroppedConnection) {
                return; // closing the exchange without headers drops the connection
            }
            if (fault instanceof Fault.SlowAnswer slow) {
                sleepQuietly(slow.delay().toMillis());
            } else if (fault instanceof Fault.ApiErrorAnswer error) {
                send(exchange, error.status(), errorBody(responseName(command), error.status(), error.csErrorCode(), error.errorText()));
                return;
            } else if (fault instanceof Fault.ProxyErrorAnswer proxy) {
                send(exchange, proxy.status(), proxy.body());
                return;
            }
            Answer answer = answer(command, lower, caller);
            if (fault instanceof Fault.AnswerLost) {
                return; // the server acted; the answer never reaches the client
            }
            if (fault instanceof Fault.AnswerLate late) {
                sleepQuietly(late.delay().toMillis()); // the server acted; the client stops waiting before the answer leaves
            }
            if (fault instanceof Fault.AnswerReplaced replaced) {
                send(exchange, replaced.status(), replaced.body() != null ? replaced.body() : answer.body.substring(0, answer.body.length() / 2));
                return;
            }
            send(exchange, answer.status, answer.body);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * ApiServer.verifyRequest's order: an expired signature is 401 (no cserrorcode, the ApiServlet's text); then
     * a command the key's role does not allow is 432 from the API checker (commandAvailable, before the signature
     * is compared), named "errorresponse" as every UNSUPPORTED_ACTION_ERROR is; then an unknown key or a bad
     * signature is 401; a missing required parameter (431) only after all of these.
     */
    private Answer answer(String command, Map<String, String> params, Optional<SimulatedAccount> caller) {
        SimulatedAccount account = accountsByApiKey.get(params.getOrDefault("apikey", ""));
        // verifyRequest refuses an expired signature (401) before it looks up the key's user and asks the role (432).
        if (account != null && !signatureExpired(params) && !mayCall(account, command)) {
            return new Answer(432, errorBody("errorresponse", 432, 9999, "The API [" + command
                    + "] does not exist or is not available for the account Account [{\"accountName\":\"" + account.name() + "\"}]."));
        }
        if (caller.isEmpty()) {
            return new Answer(401, errorBody(responseName(command), 401, null, "unable to verify user credentials and/or request signature"));
        }
        synchronized (this) {
            runDueJobs();
            return dispatch(command, params, caller.get());
        }
    }

    private boolean signatureExpired(Map<String, String> lower) {
        if (!"3".equals(lower.get("signatureversion"))) {
            return false;
        }
        try {
            return OffsetDateTime.parse(lower.getOrDefault("expires", ""), CLOUDSTACK_TIME).toInstant().isBefore(now());
        } catch (DateTimeParseException e) {
            return true;
        }
    }

    private boolean mayCall(SimulatedAccount account, String command) {
        Set<String> allowed = allowedApisByAccount.get(account.accountKey());
        String lower = command.toLowerCase(Locale.ROOT);
        return IMPLEMENTED.contains(lower) && (allowed == null || allowed.contains(lower));
    }

    private record Answer(int status, String body) {
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void parseInto(Map<String, String> params, String encoded) {
        if (encoded == null || encoded.isEmpty()) {
            return;
        }
        for (String pair : encoded.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = URLDecoder.decode(equals < 0 ? pair : pair.substring(0, equals), StandardCharsets.UTF_8);
            String value = equals < 0 ? "" : URLDecoder.decode(pair.substring(equals + 1), StandardCharsets.UTF_8);
            params.put(name, value);
        }
    }

    private void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json; charset=UTF-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    // ---- Signature check, like ApiServer.verifyRequest ---------------------------------------

    private Optional<SimulatedAccount> verifiedCaller(Map<String, String> params, Map<String, String> lower) {
        SimulatedAccount account = accountsByApiKey.get(lower.getOrDefault("apikey", ""));
        String signature = lower.get("signature");
        if (account == null || signature == null) {
            return Optional.empty();
        }
        if ("3".equals(lower.get("signatureversion"))) {
            String expires = lower.get("expires");
            if (expires == null) {
                return Optional.empty();
            }
            // expiresTS.before(now), now being the management server's own clock.
            if (signatureExpired(lower)) {
                return Optional.empty();
            }
        }
        List<String> names = new ArrayList<>(params.keySet());
        names.remove("signature");
        names.sort(Comparator.naturalOrder());
        StringBuilder unsigned = new StringBuilder();
        for (String name : names) {
            if (unsigned.length() > 0) {
                unsigned.append('&');
            }
            unsigned.append(name).append('=')
                    .append(URLEncoder.encode(params.get(name), StandardCharsets.UTF_8).replace("+", "%20"));
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(account.secretKey().getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
            String expected = Base64.getEncoder().encodeToString(
                    mac.doFinal(unsigned.toString().toLowerCase(Locale.ROOT).getBytes(StandardCharsets.UTF_8)));
            return expected.equals(signature) ? Optional.of(account) : Optional.empty();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- Errors ------------------------------------------------------------------------------

    /** BaseCmd.USER_ERROR_MESSAGE: what a non-root caller sees instead of an unexpected exception's text. */
    static final String USER_ERROR_MESSAGE = "Internal error executing command, please contact your system administrator";

    /**
     * A synchronous error answer, serialized like ApiServer.getSerializedApiError; the cserrorcode is
     * CSExceptionErrorCode's for the exception behind it (4350 InvalidParameterValue, 4365
     * PermissionDenied, 9999 a bare ServerApiException).
     */
    private static final class ErrorAnswer extends RuntimeException {
        final int code;
        final Integer csErrorCode;

        ErrorAnswer(int code, Integer csErrorCode, String text) {
            super(text);
            this.code = code;
            this.csErrorCode = csErrorCode;
        }
    }

    private static ErrorAnswer paramError(String text) {
        return new ErrorAnswer(431, 4350, text);
    }

    /** ParamProcessWorker.translateUuidToInternalId's refusal of an id that names nothing, wrapped by processParameters. */
    private static ErrorAnswer unknownId(String command, String param, String value) {
        return new ErrorAnswer(431, 9999, "Unable to execute API command " + command.toLowerCase(Locale.ROOT)
                + " due to invalid value. Invalid parameter " + param + " value=" + value
                + " due to incorrect long value format, or entity does not exist or due to incorrect parameter annotation for the field in api cmd class.");
    }

    private static ErrorAnswer internalError(String text) {
        return new ErrorAnswer(530, 9999, text);
    }

    /**
     * A refusal raised while the async job runs: ApiAsyncJobDispatcher.runJob records an
     * InvalidParameterValueException as errorcode 431, a ServerApiException with its own code, and
     * anything else (PermissionDenied, CloudRuntime) as 530 with the exception's message.
     */
    private static final class JobRefusal extends RuntimeException {
        final int code;

        JobRefusal(int code, String text) {
            super(text);
            this.code = code;
        }
    }

    private static JobRefusal jobParamError(String text) {
        return new JobRefusal(431, text);
    }

    private static JobRefusal jobInternalError(String text) {
        return new JobRefusal(530, text);
    }

    private static String responseName(String command) {
        return command == null || command.isEmpty() ? "errorresponse" : command.toLowerCase(Locale.ROOT) + "response";
    }

    // ---- Commands --------------------------------------------------------------------------

    /** The commands it answers, as their APICommand names. */
    private static final List<String> COMMANDS = List.of("listKubernetesClusters", "listVirtualMachines",
            "listKubernetesSupportedVersions", "listCapabilities", "listAsyncJobs", "queryAsyncJobResult", "listApis",
            "scaleKubernetesCluster", "removeNodesFromKubernetesCluster", "removeVirtualMachinesFromKubernetesCluster",
            "destroyVirtualMachine", "attachIso", "detachIso");

    private static final Set<String> IMPLEMENTED = COMMANDS.stream().map(name -> name.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());

    /** listApis' isasync (BaseAsyncCmd) for the commands it may list. */
    private static final Set<String> ASYNC = Set.of("scalekubernetescluster", "removenodesfromkubernetescluster", "destroyvirtualmachine",
            "attachiso", "detachiso", "associateipaddress", "disassociateipaddress", "createloadbalancerrule", "updateloadbalancerrule",
            "deleteloadbalancerrule", "assigntoloadbalancerrule", "removefromloadbalancerrule", "createfirewallrule", "updatefirewallrule",
            "deletefirewallrule", "createnetworkacl", "deletenetworkacl");

    /**
     * The parameters ParamProcessWorker.processParameters requires (each command's {@code @Parameter(required = true)}):
     * one missing is refused 431 before the command runs or its job is queued, and after the role's 432.
     */
    private static final Map<String, List<String>> REQUIRED = Map.of("queryasyncjobresult", List.of("jobid"),
            "scalekubernetescluster", List.of("id"), "removenodesfromkubernetescluster", List.of("id", "nodeids"),
            "removevirtualmachinesfromkubernetescluster", List.of("id", "virtualmachineids"), "destroyvirtualmachine", List.of("id"),
            "attachiso", List.of("id", "virtualmachineid"), "detachiso", List.of("virtualmachineid"));

    private Answer dispatch(String command, Map<String, String> params, SimulatedAccount caller) {
        try {
            String name = command.toLowerCase(Locale.ROOT);
            for (String required : REQUIRED.getOrDefault(name, List.of())) {
                if (!params.containsKey(required)) {
                    throw new ErrorAnswer(431, 9999, "Unable to execute API command " + name + " due to missing parameter " + required);
                }
            }
            return switch (name) {
                case "listapis" -> listApis(caller);
                case "listkubernetesclusters" -> listKubernetesClusters(params, caller);
                case "listvirtualmachines" -> listVirtualMachines(params, caller);
                case "listkubernetessupportedversions" -> listSupportedVersions(params);
                case "listcapabilities" -> listCapabilities(caller);
                case "listasyncjobs" -> listAsyncJobs(params, caller);
                case "queryasyncjobresult" -> queryAsyncJobResult(params, caller);
                case "scalekubernetescluster" -> scaleKubernetesCluster(params, caller);
                case "removenodesfromkubernetescluster" -> removeNodesFromCluster(params, caller);
                case "removevirtualmachinesfromkubernetescluster" -> removeVmsFromCluster(params, caller);
                case "destroyvirtualmachine" -> destroyVirtualMachine(params, caller);
                case "attachiso" -> attachIso(params, caller);
                case "detachiso" -> detachIso(params, caller);
                default -> throw new IllegalStateException("not implemented: " + command);
            };
        } catch (ErrorAnswer e) {
            String name = e.code == 432 ? "errorresponse" : responseName(command);
            return new Answer(e.code, errorBody(name, e.code, e.csErrorCode, e.getMessage()));
        }
    }

    // ---- Reads -------------------------------------------------------------------------------

    /** KubernetesClusterManagerImpl.listKubernetesClusters: filters id, name, keyword, state, clustertype; ACL scoping. */
    private Answer listKubernetesClusters(Map<String, String> params, SimulatedAccount caller) {
        String command = "listKubernetesClusters";
        String id = params.get("id");
        if (id != null && !clusters.containsKey(id)) {
            throw unknownId(command, "id", id);
        }
        String keyword = params.get("keyword");
        Stream<SimulatedCluster> matching = clusters.values().stream()
                .filter(cluster -> visible(cluster.owner(), params, caller))
                .filter(cluster -> id == null || cluster.id().equals(id))
                .filter(cluster -> !params.containsKey("name") || cluster.name().equals(params.get("name")))
                .filter(cluster -> keyword == null || cluster.name().contains(keyword))
                .filter(cluster -> !params.containsKey("state") || cluster.state().equalsIgnoreCase(params.get("state")))
                .filter(cluster -> !params.containsKey("clustertype") || cluster.clusterType().equalsIgnoreCase(params.get("clustertype")));
        return listAnswer(command, "kubernetescluster", matching.map(cluster -> clusterJson(cluster, caller)).toList(), params);
    }

    /** ListVMsCmd + UserVmJoinDaoImpl.newUserVmResponse: details decide what each VM carries; name is a substring match. */
    private Answer listVirtualMachines(Map<String, String> params, SimulatedAccount caller) {
        String command = "listVirtualMachines";
        Set<String> details = details(params.get("details"));
        String id = params.get("id");
        if (id != null && !vms.containsKey(id) && !expungedVmIds.contains(id)) {
            throw unknownId(command, "id", id);
        }
        String keyword = params.get("keyword");
        Stream<SimulatedVm> matching = vms.values().stream()
                .filter(vm -> visible(vm.owner(), params, caller))
                .filter(vm -> id == null || vm.id().equals(id))
                .filter(vm -> !params.containsKey("name") || vm.name().contains(params.get("name")))
                .filter(vm -> !params.containsKey("state") || vm.state().equalsIgnoreCase(params.get("state")))
                .filter(vm -> keyword == null || vm.name().contains(keyword));
        return listAnswer(command, "virtualmachine", matching.map(vm -> vmJson(vm, details, caller)).toList(), params);
    }

    private static final List<String> VM_DETAILS = List.of("all", "group", "nics", "stats", "secgrp", "tmpl", "servoff", "diskoff",
            "backoff", "iso", "volume", "min", "affgrp");

    /** ListVMsCmd.getDetails: none given means all of them. */
    private static Set<String> details(String param) {
        if (param == null || param.isBlank()) {
            return Set.of("all");
        }
        Set<String> details = new HashSet<>();
        for (String detail : param.split(",")) {
            if (!VM_DETAILS.contains(detail.trim())) {
                throw paramError("The details parameter contains a non permitted value. The allowed values are " + VM_DETAILS);
            }
            details.add(detail.trim());
        }
        return details;
    }

    private Answer listSupportedVersions(Map<String, String> params) {
        String id = params.get("id");
        if (id != null && !versions.containsKey(id)) {
            throw unknownId("listKubernetesSupportedVersions", "id", id);
        }
        Stream<SimulatedVersion> matching = versions.values().stream().filter(version -> id == null || version.id().equals(id));
        return listAnswer("listKubernetesSupportedVersions", "kubernetessupportedversion", matching.map(this::versionJson).toList(), params);
    }

    /**
     * ListApisCmd and ApiDiscoveryServiceImpl.listApis: every command the caller's role allows (each passed through
     * the role's API checkers), with its name and whether it is async; a ListResponse ({@code count}, {@code api}).
     */
    private Answer listApis(SimulatedAccount caller) {
        Set<String> names = listedApisByAccount.getOrDefault(caller.accountKey(), new TreeSet<>(COMMANDS));
        ArrayNode apis = json.createArrayNode();
        for (String name : names) {
            ObjectNode api = json.createObjectNode();
            api.put("name", name);
            api.put("isasync", ASYNC.contains(name.toLowerCase(Locale.ROOT)));
            apis.add(api);
        }
        ObjectNode inner = json.createObjectNode();
        inner.put("count", apis.size());
        inner.set("api", apis);
        return ok("listApis", inner);
    }

    /** ManagementServerImpl.listCapabilities: allowuserexpungerecovervm is the account's setting or'ed with being an admin. */
    private Answer listCapabilities(SimulatedAccount caller) {
        ObjectNode capability = json.createObjectNode();
        if (cloudStackVersion != null) {
            capability.put("cloudstackversion", cloudStackVersion);
        }
        capability.put("allowuserexpungerecovervm", caller.admin() || userExpungeAllowedAccounts.contains(caller.accountKey()));
        capability.put("kubernetesserviceenabled", true);
        ObjectNode inner = json.createObjectNode();
        inner.set("capability", capability);
        return ok("listCapabilities", inner);
    }

    /**
     * ListAsyncJobsCmd and QueryManagerImpl.searchForAsyncJobsInternal: the jobs of the caller's
     * account, whichever of its users (API keys) started them (AccountManagerImpl.buildACLSearchParameters
     * puts the caller's account, not the user, in permittedAccounts); a root admin with listall sees
     * every account's. Only jobs still running: AsyncJobManagerImpl.completeAsyncJob sets a finished
     * job's removed, and the search (GenericDaoBase.searchAndCount) adds "removed IS NULL" for
     * async_job_view; queryAsyncJobResult still knows a finished job until it is expunged. startdate is
     * a day (ParamProcessWorker parses CommandType.DATE as yyyy-MM-dd; the simulator's zone is UTC).
     */
    private Answer listAsyncJobs(Map<String, String> params, SimulatedAccount caller) {
        Instant since = Instant.EPOCH;
        if (params.containsKey("startdate")) {
            try {
                since = LocalDate.parse(params.get("startdate").substring(0, Math.min(10, params.get("startdate").length())))
                        .atStartOfDay(ZoneOffset.UTC).toInstant();
            } catch (DateTimeParseException e) {
                throw paramError("Unable to parse date " + params.get("startdate") + " for command listasyncjobs, please pass dates in the format mentioned in the api documentation");
            }
        }
        boolean all = caller.admin() && "true".equalsIgnoreCase(params.get("listall"));
        Instant from = since;
        List<ObjectNode> matching = jobs.values().stream()
                .filter(job -> all || job.owner.sameAccountAs(caller))
                .filter(job -> job.completed == null)
                .filter(job -> !job.started.isBefore(from))
                .sorted(Comparator.comparing(job -> job.started))
                .map(this::jobJson).toList();
        return listAnswer("listAsyncJobs", "asyncjobs", matching, params);
    }

    /** QueryAsyncJobResultCmd: a job id that names no job is an unknown id like any other UUID parameter. */
    private Answer queryAsyncJobResult(Map<String, String> params, SimulatedAccount caller) {
        SimulatedJob job = jobs.get(params.getOrDefault("jobid", ""));
        if (job == null) {
            throw unknownId("queryAsyncJobResult", "jobid", params.get("jobid"));
        }
        if (job.status == 0) {
            job.polls++;
            if (job.outcome instanceof JobOutcome.SucceedsAfterPolls succeeds && job.polls >= succeeds.polls()) {
                finish(job);
            } else if (job.outcome instanceof JobOutcome.FailsAfterPolls fails && job.polls >= fails.polls()) {
                job.onFailure.run();
                failJob(job, fails.errorCode(), fails.errorText());
                job.completed = now();
            }
        }
        return ok("queryAsyncJobResult", jobJson(job));
    }

    /**
     * Jobs planned by time run when their time has come, whether or not anybody polls them, as
     * CloudStack's job executor does: what a write that lost its answer did is visible to any read.
     */
    private void runDueJobs() {
        for (SimulatedJob job : jobs.values()) {
            if (job.status == 0 && job.outcome instanceof JobOutcome.SucceedsAfter after
                    && !now().isBefore(job.started.plus(after.duration()))) {
                finish(job);
            }
        }
        // AsyncJobManagerImpl.getGCTask: a finished job is expunged job.expire.minutes (1440 by default)
        // after it finished; listAsyncJobs no longer shows it and queryAsyncJobResult no longer knows its id.
        jobs.values().removeIf(job -> job.completed != null && !now().isBefore(job.completed.plus(JOB_EXPIRY)));
    }

    /** A pending job ends now, successfully, whatever was planned (a test that held it pending lets it go). */
    public synchronized void finishJob(String jobId) {
        SimulatedJob job = jobs.get(jobId);
        if (job == null || job.status != 0) {
            throw new IllegalArgumentException("no pending job " + jobId);
        }
        finish(job);
    }

    private void finish(SimulatedJob job) {
        try {
            job.effect.run();
            job.status = 1;
            job.jobResult = job.result.get();
        } catch (JobRefusal refusal) {
            job.onFailure.run();
            failJob(job, refusal.code, refusal.getMessage());
        }
        job.completed = now();
    }

    private void failJob(SimulatedJob job, int code, String text) {
        job.status = 2;
        ObjectNode error = json.createObjectNode();
        error.put("errorcode", code);
        if (text != null) {
            error.put("errortext", text);
        }
        job.jobResult = error;
    }

    /**
     * CloudStack's visibility: a project id shows that project's resources; account+domainid shows
     * that account's (admins only, for others it must be their own); otherwise the caller's own,
     * or with listall=true every account an admin can see. Project resources only show with projectid.
     */
    private boolean visible(Owner owner, Map<String, String> params, SimulatedAccount caller) {
        String projectId = params.get("projectid");
        if (projectId != null) {
            return projectId.equals(owner.projectId());
        }
        if (owner.projectId() != null) {
            return false;
        }
        String account = params.get("account");
        if (account != null) {
            if (!caller.admin() && !account.equals(caller.name())) {
                throw new ErrorAnswer(531, 4365, "Account " + caller.name() + " can't access account " + account);
            }
            return account.equals(owner.account()) && params.getOrDefault("domainid", "").equals(owner.domainId());
        }
        if (caller.admin() && "true".equalsIgnoreCase(params.get("listall"))) {
            return true;
        }
        return caller.name().equals(owner.account()) && caller.domainId().equals(owner.domainId());
    }

    private Answer listAnswer(String command, String entityKey, List<ObjectNode> all, Map<String, String> params) {
        ObjectNode inner = json.createObjectNode();
        List<ObjectNode> page = all;
        if (params.containsKey("pagesize")) {
            int pageSize = Integer.parseInt(params.get("pagesize"));
            int pageNumber = Integer.parseInt(params.getOrDefault("page", "1"));
            int from = Math.min(all.size(), (pageNumber - 1) * pageSize);
            page = all.subList(from, Math.min(all.size(), from + pageSize));
        }
        // Like the server, nothing at all (not even count) when nothing matched.
        if (!all.isEmpty()) {
            inner.put("count", all.size());
            ArrayNode array = inner.putArray(entityKey);
            page.forEach(array::add);
        }
        return ok(command, inner);
    }

    // ---- Cluster writes ----------------------------------------------------------------------

    /**
     * scaleKubernetesCluster with nodeids, as KubernetesClusterManagerImpl.validateKubernetesClusterScaleParameters
     * and KubernetesClusterScaleWorker do it, all inside the job (ScaleKubernetesClusterCmd.execute turns
     * every CloudRuntimeException into 530). Only unknown ids are refused up front.
     */
    private Answer scaleKubernetesCluster(Map<String, String> params, SimulatedAccount caller) {
        String command = "scaleKubernetesCluster";
        SimulatedCluster cluster = knownCluster(command, params.get("id"));
        List<String> nodeIds = knownVmIds(command, "nodeids", params.get("nodeids"));
        return startJob(command, caller, null, null, () -> {
            if (!nodeIds.isEmpty() || params.containsKey("size")) {
                checkMayOperate(cluster.owner(), caller);
            } else {
                throw jobInternalError("Kubernetes cluster " + cluster.name() + " cannot be scaled, either service offering or cluster size or nodeids to be removed or autoscaling must be passed");
            }
            if (!"CloudManaged".equalsIgnoreCase(cluster.clusterType())) {
                throw jobInternalError("Scale kubernetes cluster is not supported for an externally managed cluster (" + cluster.name() + ")");
            }
            if (!versions.containsKey(cluster.versionId())) {
                throw jobInternalError("Invalid Kubernetes version associated with Kubernetes cluster : " + cluster.name());
            }
            if (!List.of("Created", "Running", "Stopped").contains(cluster.state())) {
                throw jobInternalError("Kubernetes cluster " + cluster.name() + " is in " + cluster.state() + " state and can not be scaled");
            }
            List<SimulatedVm> targets = new ArrayList<>();
            if (!nodeIds.isEmpty()) {
                for (String nodeId : nodeIds) {
                    if (!cluster.vmIds().contains(nodeId)) {
                        throw jobInternalError("Invalid node ids");
                    }
                }
                long controls = nodeIds.stream().map(vms::get).filter(vm -> vm != null && vm.role() == NodeRole.CONTROL).count();
                if (controls >= cluster.controlNodes()) {
                    throw jobInternalError("Can not remove all control nodes from a cluster");
                }
                if (nodeIds.size() - controls >= cluster.size()) {
                    throw jobInternalError("Can not remove all nodes from a cluster");
                }
                if (cluster.vmIds().size() < cluster.totalNodeCount()) {
                    throw jobInternalError("Scaling failed for Kubernetes cluster : " + cluster.name()
                            + ", it is in unstable state as not enough existing VM instances found");
                }
                // External nodes are skipped, yet counted in the new size (clusterSize = nodeCount - nodeIds.size()).
                cluster.vmIds().stream().filter(nodeIds::contains).map(vms::get)
                        .filter(vm -> vm == null || !vm.externalNode()).forEach(targets::add);
                java.util.Collections.reverse(targets);
            }
            String before = cluster.state();
            cluster.setState("Scaling");
            return new JobWork(() -> {
                if (!nodeIds.isEmpty()) {
                    for (SimulatedVm vm : targets) {
                        if ("Created".equals(before)) {
                            break; // a Created cluster only gets its record changed
                        }
                        if (vm == null || vm.role() == NodeRole.ETCD) {
                            // removeKubernetesClusterNode drains through kubectl: an etcd VM (no Node) cannot be
                            // drained, an expunged one not even named; the job fails part-way with the cluster in Alert.
                            throw jobInternalError("Scaling failed for Kubernetes cluster " + cluster.name()
                                    + ", failed to remove Kubernetes node: " + (vm == null ? "null" : vm.name()) + " running on VM : "
                                    + (vm == null ? "null" : vm.name()));
                        }
                        cluster.removeFromMap(vm.id());
                        expunge(vm.id());
                    }
                    cluster.setSize(cluster.size() - nodeIds.size());
                } else {
                    cluster.setSize(Long.parseLong(params.get("size")));
                }
                cluster.setState("Running");
            }, () -> wrap("kubernetescluster", clusterJson(cluster, caller)), () -> cluster.setState("Alert"));
        });
    }

    /**
     * removeNodesFromKubernetesCluster (4.21+), as KubernetesClusterManagerImpl.removeNodesFromKubernetesCluster
     * and KubernetesClusterRemoveWorker do it: validateNodes(remove=true) drops only ids without a VM (no
     * check that a node is external, in the map, or that the cluster is CloudManaged, and no state check
     * before the job); the worker moves the cluster Running/Alert → RemovingNodes, drains and resets each
     * node (kubeadm reset) and drops its map row; the VM itself stays; the size drops by every node
     * processed. A failed removal moves the cluster back to Running, not Alert (KubernetesCluster.State:
     * RemovingNodes + OperationFailed → Running). The job names the cluster
     * (RemoveNodesFromKubernetesClusterCmd.getApiResourceType/getApiResourceId: jobinstancetype only, see
     * {@link #jobJson}); every failure is a 530
     * "Failed to remove node(s) from Kubernetes cluster ID: … due to: …" (its execute wraps all exceptions).
     */
    private Answer removeNodesFromCluster(Map<String, String> params, SimulatedAccount caller) {
        String command = "removeNodesFromKubernetesCluster";
        SimulatedCluster cluster = knownCluster(command, params.get("id"));
        List<String> nodeIds = knownVmIds(command, "nodeids", params.get("nodeids"));
        return startJob(command, caller, "KubernetesCluster", cluster.id(), () -> {
            List<SimulatedVm> valid = nodeIds.stream().map(vms::get).filter(vm -> vm != null).toList();
            if (valid.isEmpty()) {
                throw jobInternalError("Failed to remove node(s) from Kubernetes cluster ID: " + cluster.id()
                        + " due to: No valid nodes found to be removed from the Kubernetes cluster");
            }
            cluster.setState("RemovingNodes");
            return new JobWork(() -> {
                for (SimulatedVm vm : valid) {
                    if (cluster.removeFromMap(vm.id())) {
                        vm.setCluster(null, NodeRole.NONE);
                        vm.setExternalNode(false);
                    }
                }
                cluster.setSize(cluster.size() - valid.size());
                cluster.setState("Running");
            }, () -> wrap("kubernetescluster", clusterJson(cluster, caller)), () -> cluster.setState("Running"));
        });
    }

    /**
     * removeVirtualMachinesFromKubernetesCluster: a synchronous list command (4.19+). Per VM a
     * SuccessResponse; a VM not in the map is success=false with a reason, never an error. A map
     * entry whose VM is expunged fails the whole call with an internal error (KubernetesClusterManagerImpl
     * .removeVmsFromCluster gets a null VM).
     */
    private Answer removeVmsFromCluster(Map<String, String> params, SimulatedAccount caller) {
        String command = "removeVirtualMachinesFromKubernetesCluster";
        SimulatedCluster cluster = knownCluster(command, params.get("id"));
        List<String> vmIds = knownVmIds(command, "virtualmachineids", params.get("virtualmachineids"));
        if (!"ExternalManaged".equalsIgnoreCase(cluster.clusterType())) {
            throw internalError("VM cannot be removed from a CloudStack Managed Kubernetes cluster");
        }
        checkMayOperateSync(cluster.owner(), caller);
        List<String> mapped = vmIds.stream().filter(cluster.vmIds()::contains).toList();
        if (mapped.stream().anyMatch(expungedVmIds::contains)) {
            // removeVmsFromCluster: userVmService.getUserVm skips removed VMs, a NullPointerException follows,
            // and ApiServer answers 530 with the text hidden from non-root callers.
            throw internalError(caller.admin() ? null : USER_ERROR_MESSAGE);
        }
        String itemName = responseName(command);
        ArrayNode results = json.createArrayNode();
        for (String vmId : mapped) {
            cluster.removeFromMap(vmId);
            findVm(vmId).ifPresent(vm -> vm.setCluster(null, NodeRole.NONE));
            ObjectNode entry = results.addObject();
            entry.put("id", vmId);
            entry.put("success", true);
        }
        for (String vmId : vmIds) {
            if (mapped.contains(vmId)) {
                continue;
            }
            ObjectNode entry = results.addObject();
            entry.put("id", vmId);
            entry.put("success", false);
            entry.put("displaytext", expungedVmIds.contains(vmId) ? "VM is already removed" : "VM is not part of the cluster");
        }
        if (results.isEmpty()) {
            throw internalError("Provided VMs are not part of the CKS cluster");
        }
        // updateNodeCount: control nodes are the map's control rows, size the rest.
        long controls = cluster.vmIds().stream().map(vms::get).filter(vm -> vm != null && vm.role() == NodeRole.CONTROL).count();
        cluster.setControlNodes(controls);
        cluster.setSize(cluster.vmIds().size() - controls);
        ObjectNode inner = json.createObjectNode();
        inner.put("count", results.size());
        inner.set(itemName, results);
        return ok(command, inner);
    }

    // ---- VM writes -----------------------------------------------------------------------------

    /**
     * destroyVirtualMachine: DestroyVMCmd's @ACL check is synchronous; in the job,
     * KubernetesServiceHelperImpl.checkVmCanBeDestroyed refuses a CKS node of a CloudManaged cluster,
     * expunge needs an admin or allow.user.expunge.recover.vm, UserVmManagerImpl.destroyVm refuses an
     * expunged VM and accepts an already destroyed one.
     */
    private Answer destroyVirtualMachine(Map<String, String> params, SimulatedAccount caller) {
        String command = "destroyVirtualMachine";
        String vmId = knownVmId(command, "id", params.get("id"));
        SimulatedVm existing = vms.get(vmId);
        if (existing != null) {
            checkMayOperateSync(existing.owner(), caller);
        }
        boolean expunge = "true".equalsIgnoreCase(params.get("expunge"));
        return startJob(command, caller, "VirtualMachine", vmId, () -> {
            SimulatedVm vm = vms.get(vmId);
            if (vm == null) {
                throw jobParamError("Unable to find a virtual machine with specified vmId");
            }
            if (vm.clusterId() != null && "CloudManaged".equalsIgnoreCase(cluster(vm.clusterId()).clusterType())) {
                throw jobInternalError("Instance is a part of a Kubernetes cluster: " + cluster(vm.clusterId()).name()
                        + ". Use Instance delete option from Kubernetes cluster details or scale API for Kubernetes clusters with 'nodeids' to destroy the instance.");
            }
            if (expunge && !caller.admin() && !userExpungeAllowedAccounts.contains(caller.accountKey())) {
                throw jobInternalError("Parameter expunge can be passed by Admin only. Or when the allow.user.expunge.recover.vm key is set.");
            }
            return new JobWork(() -> {
                vm.setState(expunge ? "Expunging" : "Destroyed");
                if (expunge) {
                    expunge(vm.id());
                }
            }, () -> wrap("virtualmachine", vmJson(vm, Set.of("all"), caller)), () -> { });
        });
    }

    /**
     * attachIso: AttachIsoCmd.getEntityOwnerId needs the VM (synchronous); TemplateManagerImpl.attachIso
     * runs in the job, wants a Running or Stopped VM and does not mind an ISO already there (the CD-ROM
     * is swapped). The finished job carries the VM with all details. The job names the VM
     * (AttachIsoCmd.getApiResourceType/getApiResourceId).
     */
    private Answer attachIso(Map<String, String> params, SimulatedAccount caller) {
        String command = "attachIso";
        String vmId = knownVmId(command, "virtualmachineid", params.get("virtualmachineid"));
        String isoId = params.get("id");
        if (versions.values().stream().noneMatch(version -> version.isoId().equals(isoId))) {
            throw unknownId(command, "id", isoId);
        }
        SimulatedVm vm = vms.get(vmId);
        if (vm == null) {
            throw paramError("Unable to find virtual machine by ID " + vmId);
        }
        return startJob(command, caller, "VirtualMachine", vmId, () -> {
            checkMayOperate(vm.owner(), caller);
            requireRunningOrStopped(vm);
            return new JobWork(() -> {
                onHypervisor(vm, () -> isoDrive.insert(vm.id(), isoId), "Failed to attach ISO");
                vm.setIsoId(isoId);
            }, () -> wrap("virtualmachine", vmJson(vm, Set.of("all"), caller)), () -> { });
        });
    }

    /**
     * detachIso: TemplateManagerImpl.detachIso refuses, in the job, a VM without an ISO (errorcode 431).
     * The job names the VM (DetachIsoCmd.getApiResourceType/getApiResourceId).
     */
    private Answer detachIso(Map<String, String> params, SimulatedAccount caller) {
        String command = "detachIso";
        String vmId = knownVmId(command, "virtualmachineid", params.get("virtualmachineid"));
        SimulatedVm vm = vms.get(vmId);
        if (vm == null) {
            throw paramError("Unable to find VM by ID " + vmId);
        }
        return startJob(command, caller, "VirtualMachine", vmId, () -> {
            checkMayOperate(vm.owner(), caller);
            if (vm.isoId() == null) {
                throw jobParamError(NO_ISO_ATTACHED);
            }
            requireRunningOrStopped(vm);
            return new JobWork(() -> {
                onHypervisor(vm, () -> isoDrive.eject(vm.id()), "Failed to detach ISO");
                vm.setIsoId(null);
            }, () -> wrap("virtualmachine", vmJson(vm, Set.of("all"), caller)), () -> { });
        });
    }

    /**
     * TemplateManagerImpl.attachISOToVM: only a Running VM's host is sent the command; when it fails,
     * attachIso/detachIso throw a CloudRuntimeException (errorcode 530) and the record stays as it was.
     */
    private static void onHypervisor(SimulatedVm vm, Runnable command, String failure) {
        if (!"Running".equals(vm.state())) {
            return;
        }
        try {
            command.run();
        } catch (RuntimeException e) {
            // The management server's log says why; the job says only this.
            System.err.println("[cloudstack-simulator] " + failure + " on VM " + vm.id() + ": " + e.getMessage());
            throw jobInternalError(failure);
        }
    }

    /** TemplateManagerImpl.detachIso's text for a VM without an ISO. */
    public static final String NO_ISO_ATTACHED = "The specified VM has no ISO attached to it.";

    private static void requireRunningOrStopped(SimulatedVm vm) {
        if (!"Running".equals(vm.state()) && !"Stopped".equals(vm.state())) {
            throw jobParamError("Please specify a VM that is either Stopped or Running.");
        }
    }

    // ---- Jobs ----------------------------------------------------------------------------------

    /** What a job does when it succeeds, what it answers, and what a planned failure leaves behind. */
    private record JobWork(Runnable effect, Supplier<ObjectNode> result, Runnable onFailure) {
    }

    /** A check that runs as the job starts: throws a JobRefusal, or returns the work. */
    private interface JobStart {
        JobWork check();
    }

    /**
     * Submits a job and answers its id at once. The command's own checks run as the job starts: a
     * refusal fails the job (on its first poll) and changes nothing; otherwise the job ends as
     * planned ({@link #planJob}) and only then takes effect.
     */
    private Answer startJob(String command, SimulatedAccount caller, String instanceType, String instanceId, JobStart start) {
        JobWork work;
        JobOutcome outcome;
        try {
            work = start.check();
            Queue<JobOutcome> planned = plannedJobs.get(command.toLowerCase(Locale.ROOT));
            JobOutcome next = planned == null ? null : planned.poll();
            outcome = next == null ? defaultJobOutcome : next;
        } catch (JobRefusal refusal) {
            work = new JobWork(() -> { }, () -> null, () -> { });
            outcome = new JobOutcome.FailsAfterPolls(1, refusal.code, refusal.getMessage());
        }
        SimulatedJob job = new SimulatedJob(newId(), command, caller, instanceType, instanceId, outcome, work.effect(), work.result(),
                work.onFailure(), now());
        jobs.put(job.id, job);
        ObjectNode inner = json.createObjectNode();
        inner.put("jobid", job.id);
        return ok(command, inner);
    }

    /** The command class an async job records (root admins get the ResponseView.Full "ByAdmin" class where there is one). */
    private static String commandClass(String command, boolean admin) {
        return switch (command) {
            case "scaleKubernetesCluster" -> "org.apache.cloudstack.api.command.user.kubernetes.cluster.ScaleKubernetesClusterCmd";
            case "removeNodesFromKubernetesCluster" -> "org.apache.cloudstack.api.command.user.kubernetes.cluster.RemoveNodesFromKubernetesClusterCmd";
            case "destroyVirtualMachine" -> admin ? "org.apache.cloudstack.api.command.admin.vm.DestroyVMCmdByAdmin"
                    : "org.apache.cloudstack.api.command.user.vm.DestroyVMCmd";
            case "attachIso" -> admin ? "org.apache.cloudstack.api.command.admin.iso.AttachIsoCmdByAdmin"
                    : "org.apache.cloudstack.api.command.user.iso.AttachIsoCmd";
            case "detachIso" -> admin ? "org.apache.cloudstack.api.command.admin.iso.DetachIsoCmdByAdmin"
                    : "org.apache.cloudstack.api.command.user.iso.DetachIsoCmd";
            default -> throw new IllegalArgumentException("no async command " + command);
        };
    }

    /** The instance types among the simulator's whose uuid async_job_view resolves. */
    private static final Set<String> INSTANCE_UUID_RESOLVED = Set.of("VirtualMachine");

    /** AsyncJobJoinDaoImpl.newAsyncJobResponse: the job's account, domain and user (async_job_view's user_uuid). */
    private ObjectNode jobJson(SimulatedJob job) {
        ObjectNode node = json.createObjectNode();
        node.put("accountid", accountId(job.owner));
        node.put("account", job.owner.name());
        node.put("domainid", job.owner.domainId());
        node.put("domainpath", ROOT_DOMAIN_ID.equals(job.owner.domainId()) ? "ROOT" : "ROOT/" + job.owner.domainName());
        node.put("userid", userId(job.owner));
        node.put("cmd", commandClass(job.command, job.owner.admin()));
        node.put("created", CLOUDSTACK_TIME.format(job.started.atOffset(ZoneOffset.UTC)));
        if (job.completed != null) {
            node.put("completed", CLOUDSTACK_TIME.format(job.completed.atOffset(ZoneOffset.UTC)));
        }
        node.put("jobid", job.id);
        node.put("jobstatus", job.status);
        node.put("jobprocstatus", 0);
        // newAsyncJobResponse shows the type when the job has type and id, and the id as async_job_view's
        // instance_uuid resolves it: its CASE knows VirtualMachine (and Volume, Template, …) but not KubernetesCluster.
        if (job.instanceType != null && job.instanceId != null) {
            node.put("jobinstancetype", job.instanceType);
            if (INSTANCE_UUID_RESOLVED.contains(job.instanceType)) {
                node.put("jobinstanceid", job.instanceId);
            }
        }
        node.put("jobresultcode", job.status == 2 ? job.jobResult.get("errorcode").asInt() : 0);
        if (job.status != 0 && job.jobResult != null) {
            node.put("jobresulttype", "object");
            node.set("jobresult", job.jobResult);
        }
        return node;
    }

    private final Map<String, String> accountIds = new ConcurrentHashMap<>();
    private final Map<String, String> userIds = new ConcurrentHashMap<>();

    private String accountId(SimulatedAccount account) {
        return accountIds.computeIfAbsent(account.accountKey(), key -> newId());
    }

    /** The uuid of the user a key belongs to. */
    public String userId(SimulatedAccount user) {
        return userIds.computeIfAbsent(user.apiKey(), key -> newId());
    }

    // ---- Lookups and access -------------------------------------------------------------------

    private SimulatedCluster knownCluster(String command, String id) {
        SimulatedCluster cluster = id == null ? null : clusters.get(id);
        if (cluster == null) {
            throw unknownId(command, "id", id);
        }
        return cluster;
    }

    /** An id ParamProcessWorker can translate: any VM that exists or existed (expunged VMs included). */
    private String knownVmId(String command, String param, String id) {
        if (id == null || !vms.containsKey(id) && !expungedVmIds.contains(id)) {
            throw unknownId(command, param, id);
        }
        return id;
    }

    private List<String> knownVmIds(String command, String param, String commaSeparated) {
        List<String> ids = splitIds(commaSeparated);
        ids.forEach(id -> knownVmId(command, param, id));
        return ids;
    }

    /** AccountManager.checkAccess inside a job: a PermissionDeniedException, so errorcode 530. */
    private static void checkMayOperate(Owner owner, SimulatedAccount caller) {
        if (!mayTouch(owner, caller)) {
            throw jobInternalError("Caller " + caller.name() + " does not have permission to operate with resources of account " + owner.account());
        }
    }

    /** The same check made by ParamProcessWorker's @ACL or the command itself before the job: 531 ACCOUNT_ERROR. */
    private static void checkMayOperateSync(Owner owner, SimulatedAccount caller) {
        if (!mayTouch(owner, caller)) {
            throw new ErrorAnswer(531, 4365, "Caller " + caller.name() + " does not have permission to operate with resources of account " + owner.account());
        }
    }

    private static boolean mayTouch(Owner owner, SimulatedAccount caller) {
        return caller.admin() || caller.name().equals(owner.account()) || owner.projectId() != null;
    }

    private void expunge(String vmId) {
        if (vms.remove(vmId) != null) {
            expungedVmIds.add(vmId);
        }
    }

    private static List<String> splitIds(String value) {
        if (value == null || value.isBlank()) {
            return List.of();
        }
        return Stream.of(value.split(",")).map(String::trim).filter(id -> !id.isEmpty()).toList();
    }

    // ---- JSON shapes -------------------------------------------------------------------------

    /**
     * UserVmJoinDaoImpl.newUserVmResponse: the base fields always; ISO, template, offering and NICs
     * only for their details; instance name and host only in the root admin's (Full) view.
     */
    private ObjectNode vmJson(SimulatedVm vm, Set<String> details, SimulatedAccount caller) {
        boolean all = details.contains("all");
        ObjectNode node = json.createObjectNode();
        node.put("id", vm.id());
        node.put("name", vm.name());
        node.put("displayname", vm.name());
        putOwner(node, vm.owner());
        node.put("created", CLOUDSTACK_TIME.format(vm.created().atOffset(ZoneOffset.UTC)));
        node.put("state", vm.state());
        node.put("haenable", false);
        node.put("zoneid", ZONE_ID);
        node.put("zonename", ZONE_NAME);
        if (caller.admin()) {
            node.put("instancename", "i-2-" + Math.abs(vm.id().hashCode() % 10000) + "-VM");
            if ("Running".equals(vm.state())) {
                node.put("hostid", "host-" + vm.hostName());
                node.put("hostname", vm.hostName());
            }
        }
        if ((all || details.contains("tmpl"))) {
            node.put("templateid", TEMPLATE_ID);
            node.put("templatename", "SystemVM Template (KVM)");
        }
        if ((all || details.contains("iso")) && vm.isoId() != null) {
            node.put("isoid", vm.isoId());
            versions.values().stream().filter(version -> version.isoId().equals(vm.isoId())).findFirst()
                    .ifPresent(version -> node.put("isoname", version.isoName()).put("isodisplaytext", version.isoName()));
        }
        if (all || details.contains("servoff")) {
            node.put("serviceofferingid", SERVICE_OFFERING_ID);
            node.put("serviceofferingname", "CKS Instance");
            node.put("cpunumber", 2);
            node.put("memory", 2048);
        }
        node.put("hypervisor", "KVM");
        if (all || details.contains("nics")) {
            ArrayNode nics = node.putArray("nic");
            ObjectNode nic = nics.addObject();
            nic.put("id", vm.id() + "-nic");
            nic.put("ipaddress", "10.1.1." + (Math.abs(vm.id().hashCode()) % 250 + 2));
            nic.put("isdefault", true);
        }
        node.putArray("tags");
        node.put("displayvm", true);
        return node;
    }

    /**
     * KubernetesClusterManagerImpl.createKubernetesClusterResponse: the VM rows are built with NIC
     * details only (so no ISO, template or offering), plus KubernetesUserVmResponse's isexternalnode,
     * isetcdnode and kubernetesnodeversion; a mapped VM that is expunged has no row.
     */
    private ObjectNode clusterJson(SimulatedCluster cluster, SimulatedAccount caller) {
        ObjectNode node = json.createObjectNode();
        node.put("id", cluster.id());
        node.put("name", cluster.name());
        node.put("description", cluster.name());
        node.put("zoneid", ZONE_ID);
        node.put("zonename", ZONE_NAME);
        node.put("masternodes", cluster.controlNodes());
        node.put("controlnodes", cluster.controlNodes());
        node.put("size", cluster.size());
        SimulatedVersion version = versions.get(cluster.versionId());
        if (version != null) {
            node.put("kubernetesversionid", version.id());
            node.put("kubernetesversionname", version.name());
        }
        if (cluster.etcdNodes() > 0) {
            node.put("etcdnodes", cluster.etcdNodes());
        }
        putOwner(node, cluster.owner());
        node.put("state", cluster.state());
        node.put("cpunumber", "2");
        node.put("memory", "2048");
        node.put("endpoint", "https://10.0.0.1:6443/");
        ArrayNode members = node.putArray("virtualmachines");
        for (String vmId : cluster.vmIds()) {
            SimulatedVm vm = vms.get(vmId);
            if (vm == null) {
                continue;
            }
            ObjectNode row = vmJson(vm, Set.of("nics"), caller);
            row.put("isexternalnode", vm.externalNode());
            row.put("isetcdnode", vm.role() == NodeRole.ETCD);
            if (vm.nodeVersion() != null) {
                row.put("kubernetesnodeversion", vm.nodeVersion());
            }
            members.add(row);
        }
        node.put("autoscalingenabled", cluster.autoscalingEnabled());
        if (cluster.minSize() != null) {
            node.put("minsize", cluster.minSize());
        }
        if (cluster.maxSize() != null) {
            node.put("maxsize", cluster.maxSize());
        }
        node.put("clustertype", cluster.clusterType());
        node.put("created", CLOUDSTACK_TIME.format(cluster.created().atOffset(ZoneOffset.UTC)));
        return node;
    }

    private ObjectNode versionJson(SimulatedVersion version) {
        ObjectNode node = json.createObjectNode();
        node.put("id", version.id());
        node.put("name", version.name());
        node.put("semanticversion", version.semanticVersion());
        node.put("isoid", version.isoId());
        node.put("isoname", version.isoName());
        node.put("isostate", version.isoState());
        node.put("supportsha", true);
        node.put("supportsautoscaling", true);
        node.put("state", version.state());
        node.put("mincpunumber", 2);
        node.put("minmemory", 2048);
        return node;
    }

    private void putOwner(ObjectNode node, Owner owner) {
        node.put("domainid", owner.domainId());
        node.put("domain", ROOT_DOMAIN_ID.equals(owner.domainId()) ? "ROOT" : "sub");
        if (owner.projectId() != null) {
            node.put("projectid", owner.projectId());
            SimulatedProject project = projects.get(owner.projectId());
            node.put("project", project == null ? owner.projectId() : project.name());
        } else {
            node.put("account", owner.account());
        }
    }

    private ObjectNode wrap(String key, ObjectNode value) {
        ObjectNode node = json.createObjectNode();
        node.set(key, value);
        return node;
    }

    private Answer ok(String command, ObjectNode inner) {
        ObjectNode root = json.createObjectNode();
        root.set(command.toLowerCase(Locale.ROOT) + "response", inner);
        return new Answer(200, root.toString());
    }

    private String errorBody(String responseName, int errorCode, Integer csErrorCode, String errorText) {
        ObjectNode inner = json.createObjectNode();
        inner.putArray("uuidList");
        inner.put("errorcode", errorCode);
        if (csErrorCode != null) {
            inner.put("cserrorcode", csErrorCode);
        }
        if (errorText != null) {
            inner.put("errortext", errorText);
        }
        ObjectNode root = json.createObjectNode();
        root.set(responseName, inner);
        return root.toString();
    }

    private String newId() {
        long n = idSequence.incrementAndGet();
        return String.format("%08x-%04x-4%03x-8%03x-%012x", n * 2654435761L & 0xffffffffL, n & 0xffff, n & 0xfff,
                (n >> 12) & 0xfff, n);
    }

    private String shortHex() {
        return Long.toHexString(0x18000000000L + idSequence.incrementAndGet() * 7919);
    }
}
