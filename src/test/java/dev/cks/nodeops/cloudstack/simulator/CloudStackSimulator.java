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
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 */
public final class CloudStackSimulator implements AutoCloseable {

    public static final String API_PATH = "/client/api";
    public static final String ZONE_ID = "5f2d7e3a-0d1b-4c55-9a36-1c2f0e9b7a01";
    public static final String ZONE_NAME = "sim-zone";
    public static final String ROOT_DOMAIN_ID = "f0ff6ce4-ba19-11ec-bdce-1e000700021c";

    private static final DateTimeFormatter CLOUDSTACK_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ssZ");
    private static final Set<String> NOT_RECORDED = Set.of("apikey", "signature", "expires", "signatureversion",
            "response", "command");

    private final ObjectMapper json = new ObjectMapper();
    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private final AtomicLong idSequence = new AtomicLong();

    private final Map<String, SimulatedAccount> accountsByApiKey = new ConcurrentHashMap<>();
    private final Map<String, SimulatedProject> projects = new ConcurrentHashMap<>();
    private final Map<String, SimulatedVm> vms = new LinkedHashMap<>();
    private final Map<String, SimulatedCluster> clusters = new LinkedHashMap<>();
    private final Map<String, SimulatedVersion> versions = new LinkedHashMap<>();
    private final Map<String, SimulatedJob> jobs = new ConcurrentHashMap<>();
    private final Map<String, Queue<Fault>> faults = new ConcurrentHashMap<>();
    private final Map<String, Queue<JobOutcome>> plannedJobs = new ConcurrentHashMap<>();
    private final List<RecordedCall> calls = new CopyOnWriteArrayList<>();
    private final SimulatedAccount defaultAccount;
    private volatile JobOutcome defaultJobOutcome = JobOutcome.succeedsAfterPolls(1);

    private static final class SimulatedJob {
        final String id;
        final String command;
        final JobOutcome outcome;
        final Runnable effect;
        final Supplier<ObjectNode> result;
        final Runnable onFailure;
        final Instant started;
        int polls;
        int status;
        ObjectNode jobResult;

        SimulatedJob(String id, String command, JobOutcome outcome, Runnable effect, Supplier<ObjectNode> result,
                Runnable onFailure, Instant started) {
            this.id = id;
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
                apiKey, secretKey, admin);
        accountsByApiKey.put(apiKey, account);
        return account;
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
        SimulatedCluster cluster = new SimulatedCluster(newId(), name, owner, clusterType, versionId, clock.instant());
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
        SimulatedVm vm = new SimulatedVm(newId(), name, owner, clock.instant(), "kvm-host-" + (vms.size() % 4 + 1), "Running");
        vms.put(vm.id(), vm);
        return vm;
    }

    public synchronized SimulatedVm addClusterVm(SimulatedCluster cluster, String name, NodeRole role) {
        SimulatedVm vm = addVm(name, cluster.owner());
        vm.setCluster(cluster.id(), role);
        cluster.addToMap(vm.id(), role);
        return vm;
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
            vms.remove(vmId);
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

    public synchronized List<SimulatedVm> clusterVms(String clusterId) {
        return cluster(clusterId).vmIds().stream().map(vms::get).filter(vm -> vm != null).toList();
    }

    // ---- Faults, jobs and recorded calls -----------------------------------------------------

    /** The next requests of {@code command} meet these faults, one each, in order. */
    public void injectFault(String command, Fault... injected) {
        Queue<Fault> queue = faults.computeIfAbsent(command.toLowerCase(Locale.ROOT), key -> new ConcurrentLinkedQueue<>());
        queue.addAll(List.of(injected));
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

    private void handle(HttpExchange exchange) throws IOException {
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

            Queue<Fault> queue = faults.get(command.toLowerCase(Locale.ROOT));
            Fault fault = queue == null ? null : queue.poll();
            if (fault instanceof Fault.DroppedConnection) {
                return; // closing the exchange without headers drops the connection
            }
            if (fault instanceof Fault.SlowAnswer slow) {
                sleepQuietly(slow.delay().toMillis());
            } else if (fault instanceof Fault.ApiErrorAnswer error) {
                send(exchange, error.status(), errorBody(command, error.status(), error.csErrorCode(), error.errorText()));
                return;
            } else if (fault instanceof Fault.ProxyErrorAnswer proxy) {
                send(exchange, proxy.status(), proxy.body());
                return;
            }
            if (caller.isEmpty()) {
                send(exchange, 401, errorBody(command, 401, 9999,
                        "unable to verify user credentials and/or request signature"));
                return;
            }
            Answer answer;
            synchronized (this) {
                answer = dispatch(command, lower, caller.get());
            }
            send(exchange, answer.status, answer.body);
        }
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
            try {
                if (!OffsetDateTime.parse(expires, CLOUDSTACK_TIME).toInstant().isAfter(clock.instant())) {
                    return Optional.empty();
                }
            } catch (DateTimeParseException e) {
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

    // ---- Commands --------------------------------------------------------------------------

    private Answer dispatch(String command, Map<String, String> params, SimulatedAccount caller) {
        try {
            return switch (command.toLowerCase(Locale.ROOT)) {
                case "listkubernetesclusters" -> listKubernetesClusters(params, caller);
                case "listvirtualmachines" -> listVirtualMachines(params, caller);
                case "listkubernetessupportedversions" -> listSupportedVersions(params);
                case "scalekubernetescluster" -> scaleKubernetesCluster(params, caller);
                case "destroyvirtualmachine" -> destroyVirtualMachine(params, caller);
                case "removevirtualmachinesfromkubernetescluster" -> removeVmsFromCluster(params, caller);
                case "attachiso" -> attachIso(params, caller);
                case "detachiso" -> detachIso(params, caller);
                case "queryasyncjobresult" -> queryAsyncJobResult(params);
                default -> new Answer(432, errorBodyNamed("errorresponse", 432, 9999,
                        "The given command does not exist or it is not available for the user"));
            };
        } catch (InvalidParameter e) {
            return new Answer(431, errorBody(command, 431, 4350, e.getMessage()));
        }
    }

    private static final class InvalidParameter extends RuntimeException {
        InvalidParameter(String message) {
            super(message);
        }
    }

    private Answer listKubernetesClusters(Map<String, String> params, SimulatedAccount caller) {
        Stream<SimulatedCluster> matching = clusters.values().stream()
                .filter(cluster -> visible(cluster.owner(), params, caller))
                .filter(cluster -> !params.containsKey("id") || cluster.id().equals(params.get("id")))
                .filter(cluster -> !params.containsKey("name") || cluster.name().equals(params.get("name")))
                .filter(cluster -> !params.containsKey("clustertype") || cluster.clusterType().equalsIgnoreCase(params.get("clustertype")));
        return listAnswer("listKubernetesClusters", "kubernetescluster", matching.map(this::clusterJson).toList(), params);
    }

    private Answer listVirtualMachines(Map<String, String> params, SimulatedAccount caller) {
        String keyword = params.get("keyword");
        Stream<SimulatedVm> matching = vms.values().stream()
                .filter(vm -> visible(vm.owner(), params, caller))
                .filter(vm -> !params.containsKey("id") || vm.id().equals(params.get("id")))
                .filter(vm -> !params.containsKey("name") || vm.name().equals(params.get("name")))
                .filter(vm -> !params.containsKey("state") || vm.state().equalsIgnoreCase(params.get("state")))
                .filter(vm -> keyword == null || vm.name().contains(keyword));
        return listAnswer("listVirtualMachines", "virtualmachine", matching.map(this::vmJson).toList(), params);
    }

    private Answer listSupportedVersions(Map<String, String> params) {
        Stream<SimulatedVersion> matching = versions.values().stream()
                .filter(version -> !params.containsKey("id") || version.id().equals(params.get("id")));
        return listAnswer("listKubernetesSupportedVersions", "kubernetessupportedversion",
                matching.map(this::versionJson).toList(), params);
    }

    /**
     * CloudStack's scoping: a project id shows that project's resources; account+domainid shows
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
                throw new InvalidParameter("Account " + caller.name() + " can't access account " + account);
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

    private Answer scaleKubernetesCluster(Map<String, String> params, SimulatedAccount caller) {
        SimulatedCluster cluster = ownedCluster(params.get("id"), caller);
        if (!"Running".equals(cluster.state())) {
            throw new InvalidParameter("Kubernetes cluster : " + cluster.name() + " is in " + cluster.state()
                    + " state, scaling is only possible for Running clusters");
        }
        List<String> nodeIds = splitIds(params.get("nodeids"));
        if (nodeIds.isEmpty() && !params.containsKey("size")) {
            throw new InvalidParameter("Either size or nodeids must be given");
        }
        for (String nodeId : nodeIds) {
            SimulatedVm vm = vms.get(nodeId);
            if (!cluster.vmIds().contains(nodeId) || vm == null) {
                throw new InvalidParameter("VM " + nodeId + " is not part of Kubernetes cluster " + cluster.name());
            }
            if (vm.role() != NodeRole.WORKER) {
                throw new InvalidParameter("VM " + nodeId + " is not a worker node and cannot be removed by scaling");
            }
        }
        cluster.setState("Scaling");
        Runnable effect = () -> {
            for (String nodeId : nodeIds) {
                cluster.removeFromMap(nodeId);
                vms.remove(nodeId);
            }
            if (!nodeIds.isEmpty()) {
                cluster.setSize(cluster.size() - nodeIds.size());
            } else {
                cluster.setSize(Long.parseLong(params.get("size")));
            }
            cluster.setState("Running");
        };
        return startJob("scaleKubernetesCluster", effect, () -> wrap("kubernetescluster", clusterJson(cluster)),
                () -> cluster.setState("Alert"), cluster.id());
    }

    private Answer destroyVirtualMachine(Map<String, String> params, SimulatedAccount caller) {
        SimulatedVm vm = ownedVm(params.get("id"), caller);
        boolean expunge = "true".equalsIgnoreCase(params.get("expunge"));
        Runnable effect = () -> {
            vm.setState(expunge ? "Expunging" : "Destroyed");
            if (expunge) {
                vms.remove(vm.id());
            }
        };
        return startJob("destroyVirtualMachine", effect, () -> wrap("virtualmachine", vmJson(vm)), () -> { }, vm.id());
    }

    private Answer removeVmsFromCluster(Map<String, String> params, SimulatedAccount caller) {
        SimulatedCluster cluster = ownedCluster(params.get("id"), caller);
        if (!"ExternalManaged".equalsIgnoreCase(cluster.clusterType())) {
            throw new InvalidParameter("VMs can only be removed from ExternalManaged Kubernetes clusters; "
                    + cluster.name() + " is " + cluster.clusterType());
        }
        ArrayNode results = json.createArrayNode();
        for (String vmId : splitIds(params.get("virtualmachineids"))) {
            if (!cluster.removeFromMap(vmId)) {
                continue;
            }
            SimulatedVm vm = vms.get(vmId);
            if (vm != null) {
                if (vm.role() == NodeRole.WORKER) {
                    cluster.setSize(cluster.size() - 1);
                }
                vm.setCluster(null, NodeRole.NONE);
            }
            ObjectNode entry = results.addObject();
            entry.put("id", vmId);
            entry.put("success", true);
        }
        if (results.isEmpty()) {
            // RemoveVirtualMachinesFromKubernetesClusterCmd answers INTERNAL_ERROR when nothing matched.
            return new Answer(530, errorBody("removeVirtualMachinesFromKubernetesCluster", 530, 9999,
                    "Provided VMs are not part of the CKS cluster"));
        }
        ObjectNode inner = json.createObjectNode();
        inner.put("count", results.size());
        // The array's key is not confirmed from a recorded answer; the client accepts any array.
        inner.set("virtualmachine", results);
        return ok("removeVirtualMachinesFromKubernetesCluster", inner);
    }

    private Answer attachIso(Map<String, String> params, SimulatedAccount caller) {
        SimulatedVm vm = ownedVm(params.get("virtualmachineid"), caller);
        String isoId = params.get("id");
        boolean known = versions.values().stream().anyMatch(version -> version.isoId().equals(isoId));
        if (!known) {
            throw new InvalidParameter("Unable to find ISO with id " + isoId);
        }
        if (vm.isoId() != null) {
            throw new InvalidParameter("An ISO is already attached to VM " + vm.name());
        }
        return startJob("attachIso", () -> vm.setIsoId(isoId), () -> wrap("virtualmachine", vmJson(vm)), () -> { }, vm.id());
    }

    private Answer detachIso(Map<String, String> params, SimulatedAccount caller) {
        SimulatedVm vm = ownedVm(params.get("virtualmachineid"), caller);
        if (vm.isoId() == null) {
            throw new InvalidParameter("No ISO is attached to VM " + vm.name());
        }
        return startJob("detachIso", () -> vm.setIsoId(null), () -> wrap("virtualmachine", vmJson(vm)), () -> { }, vm.id());
    }

    private Answer startJob(String command, Runnable effect, Supplier<ObjectNode> result, Runnable onFailure,
            String resourceId) {
        Queue<JobOutcome> planned = plannedJobs.get(command.toLowerCase(Locale.ROOT));
        JobOutcome outcome = planned == null ? null : planned.poll();
        if (outcome == null) {
            outcome = defaultJobOutcome;
        }
        SimulatedJob job = new SimulatedJob(newId(), command, outcome, effect, result, onFailure, clock.instant());
        jobs.put(job.id, job);
        ObjectNode inner = json.createObjectNode();
        inner.put("jobid", job.id);
        inner.put("id", resourceId);
        return ok(command, inner);
    }

    private Answer queryAsyncJobResult(Map<String, String> params) {
        SimulatedJob job = jobs.get(params.getOrDefault("jobid", ""));
        if (job == null) {
            throw new InvalidParameter("Unable to find job by id " + params.get("jobid"));
        }
        if (job.status == 0) {
            job.polls++;
            boolean succeedsNow = job.outcome instanceof JobOutcome.SucceedsAfterPolls succeeds && job.polls >= succeeds.polls()
                    || job.outcome instanceof JobOutcome.SucceedsAfter after
                            && !clock.instant().isBefore(job.started.plus(after.duration()));
            if (succeedsNow) {
                job.effect.run();
                job.status = 1;
                job.jobResult = job.result.get();
            } else if (job.outcome instanceof JobOutcome.FailsAfterPolls fails && job.polls >= fails.polls()) {
                job.onFailure.run();
                job.status = 2;
                ObjectNode error = json.createObjectNode();
                error.put("errorcode", fails.errorCode());
                error.put("errortext", fails.errorText());
                job.jobResult = error;
            }
        }
        ObjectNode inner = json.createObjectNode();
        inner.put("accountid", defaultAccount.name());
        inner.put("cmd", "org.apache.cloudstack.api.command.user." + job.command + "Cmd");
        inner.put("jobid", job.id);
        inner.put("jobstatus", job.status);
        inner.put("jobprocstatus", 0);
        inner.put("jobresultcode", job.status == 2 ? job.jobResult.get("errorcode").asInt() : 0);
        if (job.status != 0) {
            inner.put("jobresulttype", "object");
            inner.set("jobresult", job.jobResult);
        }
        inner.put("created", CLOUDSTACK_TIME.format(clock.instant().atOffset(ZoneOffset.UTC)));
        return ok("queryAsyncJobResult", inner);
    }

    private SimulatedCluster ownedCluster(String id, SimulatedAccount caller) {
        SimulatedCluster cluster = id == null ? null : clusters.get(id);
        if (cluster == null || !mayTouch(cluster.owner(), caller)) {
            throw new InvalidParameter("Invalid Kubernetes cluster ID " + id);
        }
        return cluster;
    }

    private SimulatedVm ownedVm(String id, SimulatedAccount caller) {
        SimulatedVm vm = id == null ? null : vms.get(id);
        if (vm == null || !mayTouch(vm.owner(), caller)) {
            throw new InvalidParameter("Unable to find virtual machine with specified vmId " + id);
        }
        return vm;
    }

    private static boolean mayTouch(Owner owner, SimulatedAccount caller) {
        return caller.admin() || caller.name().equals(owner.account()) || owner.projectId() != null;
    }

    private static List<String> splitIds(String value) {
        if (value == null || value.isBlank()) {
            return List.of();
        }
        return Stream.of(value.split(",")).map(String::trim).filter(id -> !id.isEmpty()).toList();
    }

    // ---- JSON shapes -------------------------------------------------------------------------

    private ObjectNode vmJson(SimulatedVm vm) {
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
        if ("Running".equals(vm.state())) {
            node.put("hostid", "host-" + vm.hostName());
            node.put("hostname", vm.hostName());
        }
        node.put("instancename", "i-2-" + Math.abs(vm.id().hashCode() % 10000) + "-VM");
        node.put("hypervisor", "KVM");
        if (vm.isoId() != null) {
            node.put("isoid", vm.isoId());
            versions.values().stream().filter(version -> version.isoId().equals(vm.isoId())).findFirst()
                    .ifPresent(version -> node.put("isoname", version.isoName()));
        }
        node.putArray("nic");
        node.putArray("tags");
        node.put("displayvm", true);
        return node;
    }

    private ObjectNode clusterJson(SimulatedCluster cluster) {
        ObjectNode node = json.createObjectNode();
        node.put("id", cluster.id());
        node.put("name", cluster.name());
        node.put("description", cluster.name());
        node.put("zoneid", ZONE_ID);
        node.put("zonename", ZONE_NAME);
        SimulatedVersion version = versions.get(cluster.versionId());
        if (version != null) {
            node.put("kubernetesversionid", version.id());
            node.put("kubernetesversionname", version.name());
        }
        putOwner(node, cluster.owner());
        node.put("masternodes", cluster.controlNodes());
        node.put("controlnodes", cluster.controlNodes());
        if (cluster.etcdNodes() > 0) {
            node.put("etcdnodes", cluster.etcdNodes());
        }
        node.put("size", cluster.size());
        node.put("state", cluster.state());
        node.put("clustertype", cluster.clusterType());
        node.put("cpunumber", "2");
        node.put("memory", "2048");
        node.put("endpoint", "https://10.0.0.1:6443/");
        ArrayNode members = node.putArray("virtualmachines");
        // Entries whose VM was expunged behind CKS's back are dropped, as the server's join does.
        cluster.vmIds().stream().map(vms::get).filter(vm -> vm != null).map(this::vmJson).forEach(members::add);
        node.put("autoscalingenabled", false);
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
        node.put("account", owner.account());
        node.put("domainid", owner.domainId());
        node.put("domain", ROOT_DOMAIN_ID.equals(owner.domainId()) ? "ROOT" : "sub");
        if (owner.projectId() != null) {
            node.put("projectid", owner.projectId());
            SimulatedProject project = projects.get(owner.projectId());
            node.put("project", project == null ? owner.projectId() : project.name());
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

    private String errorBody(String command, int errorCode, int csErrorCode, String errorText) {
        String name = command == null || command.isEmpty() ? "errorresponse" : command.toLowerCase(Locale.ROOT) + "response";
        return errorBodyNamed(name, errorCode, csErrorCode, errorText);
    }

    private String errorBodyNamed(String responseName, int errorCode, int csErrorCode, String errorText) {
        ObjectNode inner = json.createObjectNode();
        inner.putArray("uuidList");
        inner.put("errorcode", errorCode);
        inner.put("cserrorcode", csErrorCode);
        inner.put("errortext", errorText);
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
