package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * One real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) with
 * KWOK nodes, started by hack/testbed.sh once per test run and shared by every test class.
 * Tests that change nodes create their own with {@link #addWorker(String)} so they don't collide.
 */
public final class TestBed implements AutoCloseable {
    /**
     * Engineers running ITs side by side set TESTBED_CLUSTER (env or system property) so their beds don't collide;
     * each fork of the IT run has its own bed, TESTBED_CLUSTER with the fork's number ({@link TestRun}).
     */
    public static final String CLUSTER = TestRun.bedName(System.getProperty("TESTBED_CLUSTER",
            System.getenv().getOrDefault("TESTBED_CLUSTER", "cksit")));
    public static final String OPERATOR_NAMESPACE = "cks-node-operator";
    /** The chart installed as release `cks-node-operator` names its ServiceAccount like this. */
    public static final String OPERATOR_SERVICE_ACCOUNT = "cks-node-operator";
    private static final String NOT_READY_TAINT = "node.kubernetes.io/not-ready";
    /**
     * The bed's Kubernetes, hack/testbed.sh's K8S_VERSION: {@code -Dk8s.version} (the k8s-matrix profile passes it,
     * docs/version-matrix.md) or the environment's K8S_VERSION, else the script's default. Every call of the script
     * gets it, as its binaries are kept per version.
     */
    public static final String KUBERNETES_VERSION = configuredKubernetesVersion().orElse("v1.35.4");
    /** The kubelet version the bed's KWOK nodes report unless a test gives another (the bed's own Kubernetes). */
    public static final String NODE_VERSION = KUBERNETES_VERSION;
    static final String AUDIT_POLICY = "src/test/resources/audit/operator-calls-policy.yaml";
    static final String CHART = "deploy/helm/cks-node-operator";
    /** Every CloudStack Secret the operator's RBAC was rendered for: each fixture has its own. */
    private static final java.util.Set<String> GRANTED_SECRETS = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The kubelet version the real node starts at, one patch behind the control plane, so a NodeUpgrade has work. */
    public static final String REAL_NODE_VERSION = System.getProperty("realnode.kubeletVersion", "v1.35.3");
    private static TestBed shared;
    private static RuntimeException startFailure;
    /** The judges' other beds of the run (the forks' beds but the first), opened on first use. */
    private static List<TestBed> otherBedsOfTheRun;
    private static TestBed sharedReal;
    private static RuntimeException realStartFailure;

    private final Path projectRoot;
    /** The bed's cluster name: {@link #CLUSTER}, or for the judges one of the run's beds. */
    private final String name;
    private final Path kubeconfig;
    private final KubernetesClient client;
    private final String serverVersion;
    private final AtomicInteger names = new AtomicInteger();
    /** Empty for the KWOK bed; for the real bed what `hack/testbed.sh real-info` prints (node, nodeIp, shellImage, ...). */
    private final Map<String, String> realNode;
    private boolean closed;

    private TestBed(Path projectRoot, Path kubeconfig, Map<String, String> realNode) throws IOException {
        this(projectRoot, CLUSTER, kubeconfig, realNode);
    }

    private TestBed(Path projectRoot, String name, Path kubeconfig, Map<String, String> realNode) throws IOException {
        this.projectRoot = projectRoot;
        this.name = name;
        this.kubeconfig = kubeconfig;
        this.realNode = realNode;
        Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
        // The drain must see 429s itself, so tests use a client that does not retry them either.
        config.setRequestRetryBackoffLimit(0);
        this.client = new KubernetesClientBuilder().withConfig(config).build();
        this.serverVersion = client.getKubernetesVersion().getGitVersion();
    }

    /** The shared bed; the first call builds (if needed) and starts it, which can take minutes. */
    public static synchronized TestBed shared() {
        if (startFailure != null) {
            throw startFailure;
        }
        if (shared == null) {
            try {
                shared = TestRun.JUDGES ? attach(firstBedOfTheRun()) : start();
                Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
            } catch (Exception e) {
                startFailure = new IllegalStateException("The test bed (a real Kubernetes control plane with KWOK nodes) could not be started, "
                        + "so this test cannot run. Cause: " + e.getMessage()
                        + ". Run `hack/testbed.sh up " + CLUSTER + " 3` to see the full output; building it needs Go >= 1.24 and the Go module proxy.", e);
                throw startFailure;
            }
        }
        return shared;
    }

    /**
     * The real-mode bed: a kubeadm control-plane node on this machine (containerd, runc, a real
     * kubelet) with 2 KWOK workers; needs root. The one running now, or one with the bed's control
     * plane and a kubelet at {@link #REAL_NODE_VERSION}. Torn down (and the host checked) by
     * {@link #closeSharedReal()} or at the end of the JVM.
     */
    public static synchronized TestBed sharedReal() {
        if (realStartFailure != null) {
            throw realStartFailure;
        }
        if (sharedReal == null) {
            startReal(null, REAL_NODE_VERSION);
        }
        return sharedReal;
    }

    /**
     * A new real-mode bed whose node starts with kubeadm and the control plane at controlPlaneVersion
     * and the kubelet at kubeletVersion (a test that upgrades the node needs one nobody upgraded). The
     * running one is torn down first, and its teardown must leave the host as it was.
     */
    public static synchronized TestBed freshReal(String controlPlaneVersion, String kubeletVersion) {
        if (sharedReal != null) {
            try {
                closeSharedReal();
            } catch (IOException e) {
                throw new IllegalStateException("the previous real node's teardown failed, so no new one is started: " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        realStartFailure = null;
        startReal(controlPlaneVersion, kubeletVersion);
        return sharedReal;
    }

    private static void startReal(String controlPlaneVersion, String kubeletVersion) {
        try {
            Path root = locateProjectRoot();
            Path log = root.resolve("target/testbed-real.log");
            Files.createDirectories(log.getParent());
            Map<String, String> env = new java.util.HashMap<>(Map.of("REAL_NODE_VERSION", kubeletVersion));
            if (controlPlaneVersion != null) {
                env.put("REAL_CONTROL_PLANE_VERSION", controlPlaneVersion);
            }
            System.out.println("[testbed] starting a real kubeadm node with " + env + " hack/testbed.sh up --real " + CLUSTER + " 2 (log: " + log + ")");
            String out = run(root, log, Duration.ofMinutes(60), env, "bash", "hack/testbed.sh", "up", "--real", CLUSTER, "2");
            Map<String, String> info = new java.util.LinkedHashMap<>();
            run(root, log, Duration.ofMinutes(1), Map.of(), "bash", "hack/testbed.sh", "real-info").lines()
                    .map(line -> line.split("=", 2)).forEach(kv -> info.put(kv[0], kv[1]));
            sharedReal = new TestBed(root, Path.of(out.strip().lines().reduce((a, b) -> b).orElseThrow()), Map.copyOf(info));
            Runtime.getRuntime().addShutdownHook(new Thread(sharedReal::close));
            System.out.println("[testbed] real node " + info.get("node") + " (kubelet " + info.get("kubeletVersion") + ") at "
                    + sharedReal.client.getMasterUrl());
        } catch (Exception e) {
            realStartFailure = new IllegalStateException("The real test node (kubeadm, containerd, a kubelet on this machine) could not be started, "
                    + "so this test cannot run. Cause: " + e.getMessage() + ". It needs root and the Debian packages named by "
                    + "`hack/testbed.sh up --real`; see target/testbed-real.log.", e);
            throw realStartFailure;
        }
    }

    /**
     * Tears the real node down now and checks the host: returns the teardown's report, throws with
     * the differences when the host is not as it was before the node started.
     */
    public static synchronized String closeSharedReal() throws IOException, InterruptedException {
        TestBed bed = sharedReal();
        bed.closed = true;
        bed.client.close();
        sharedReal = null;
        return run(bed.projectRoot, null, Duration.ofMinutes(5), Map.of(), "bash", "hack/testbed.sh", "down", "--real");
    }

    public boolean isReal() {
        return !realNode.isEmpty();
    }

    /** What the real node is: node, nodeIp, shellImage (a busybox pinned by digest), stateDir, kubeletVersion. */
    public String realNode(String key) {
        if (!isReal()) {
            throw new IllegalStateException("not the real-mode bed");
        }
        return realNode.get(key);
    }

    /** Where a server in the test JVM must listen for the cluster's pods to reach it. */
    public java.net.InetAddress simulatorAddress() {
        try {
            return isReal() ? java.net.InetAddress.getByName(realNode("nodeIp")) : java.net.InetAddress.getLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static TestBed start() throws IOException, InterruptedException {
        Path root = locateProjectRoot();
        Path log = root.resolve("target/testbed.log");
        Files.createDirectories(log.getParent());
        System.out.println("[testbed] starting the real control plane with hack/testbed.sh up " + CLUSTER + " 3 (log: " + log + ")");
        // The API server audits every call of the operator's ServiceAccounts, for LeastPrivilegeIT.
        String out = run(root, log, Duration.ofMinutes(45), Map.of("TESTBED_AUDIT_POLICY", root.resolve(AUDIT_POLICY).toString()),
                "bash", "hack/testbed.sh", "up", CLUSTER, "3");
        Path kubeconfig = Path.of(out.strip().lines().reduce((a, b) -> b).orElseThrow());
        TestBed bed = new TestBed(root, kubeconfig, Map.of());
        System.out.println("[testbed] Kubernetes API server " + bed.serverVersion + " (real kube-apiserver, controller-manager, scheduler, KWOK) at "
                + bed.client.getMasterUrl());
        bed.installCrds();
        // Where the operator keeps its Lease and runs its Jobs, as the Helm chart sets it up.
        bed.client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(OPERATOR_NAMESPACE).endMetadata().build())
                .serverSideApply();
        TestRun.record(TestRun.BEDS, CLUSTER);
        return bed;
    }

    private static String firstBedOfTheRun() {
        return TestRun.recorded(TestRun.BEDS).stream().findFirst().orElseThrow(() -> new IllegalStateException(
                "no fork of test run " + TestRun.RUN + " started a bed (target/testbed-run/" + TestRun.RUN + "/beds), so there is nothing to judge"));
    }

    /** A bed a fork of this run started and left running for the judges. */
    private static TestBed attach(String name) throws IOException, InterruptedException {
        Path root = locateProjectRoot();
        Path kubeconfig = Path.of(run(root, null, Duration.ofMinutes(1), "bash", "hack/testbed.sh", "kubeconfig", name).strip());
        System.out.println("[testbed] judging the beds of run " + TestRun.RUN + ": " + TestRun.recorded(TestRun.BEDS) + "; this one is " + name);
        return new TestBed(root, name, kubeconfig, Map.of());
    }

    /**
     * Every bed of this IT run, this one first: for the judges of a forked run the beds of all forks (they ran
     * the other classes), otherwise this bed alone.
     */
    public List<TestBed> bedsOfTheRun() {
        if (!TestRun.JUDGES) {
            return List.of(this);
        }
        synchronized (TestBed.class) {
            if (otherBedsOfTheRun == null) {
                List<TestBed> others = new ArrayList<>();
                for (String other : TestRun.recorded(TestRun.BEDS)) {
                    if (!other.equals(name)) {
                        try {
                            others.add(attach(other));
                        } catch (IOException e) {
                            throw new IllegalStateException("could not reach bed " + other + " of this run: " + e.getMessage(), e);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException(e);
                        }
                    }
                }
                otherBedsOfTheRun = List.copyOf(others);
            }
            List<TestBed> all = new ArrayList<>(List.of(this));
            all.addAll(otherBedsOfTheRun);
            return all;
        }
    }

    private static java.util.Optional<String> configuredKubernetesVersion() {
        return java.util.stream.Stream.of(System.getProperty("k8s.version"), System.getenv("K8S_VERSION"))
                .filter(v -> v != null && !v.isBlank()).findFirst();
    }

    /**
     * A version relative to the bed's: {@code v1.<its minor + minors>.<patch>}. Tests that upgrade nodes start them one
     * minor behind the API server and upgrade them to its minor, so the version-skew guard lets them through on a bed
     * of any version.
     */
    public static String kubernetesVersion(int minors, int patch) {
        return "v1." + (kubernetesMinor() + minors) + "." + patch;
    }

    /** The bed's minor version: 35 for v1.35.4. */
    public static int kubernetesMinor() {
        return Integer.parseInt(KUBERNETES_VERSION.split("\\.")[1]);
    }

    static Path locateProjectRoot() {
        String configured = System.getProperty("project.root");
        Path root = configured != null ? Path.of(configured) : Path.of("").toAbsolutePath();
        if (!Files.exists(root.resolve("hack/testbed.sh"))) {
            throw new IllegalStateException("hack/testbed.sh not found under " + root + "; run the tests from the project root");
        }
        return root;
    }

    /** Applies the project's CRDs (deploy/crds) and waits until they are served. */
    public void installCrds() throws IOException {
        try (var files = Files.list(projectRoot.resolve("deploy/crds"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yml")).sorted().toList()) {
                CustomResourceDefinition crd = client.getKubernetesSerialization()
                        .unmarshal(Files.readString(file), CustomResourceDefinition.class);
                client.apiextensions().v1().customResourceDefinitions().resource(crd).forceConflicts().serverSideApply();
                client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
                        .waitUntilCondition(c -> c.getStatus() != null && c.getStatus().getConditions() != null && c.getStatus().getConditions().stream()
                                .anyMatch(cond -> "Established".equals(cond.getType()) && "True".equals(cond.getStatus())), 60, TimeUnit.SECONDS);
            }
        }
    }

    /** The bed's cluster name (hack/testbed.sh's NAME). */
    public String name() {
        return name;
    }

    public KubernetesClient client() {
        return client;
    }

    public Path kubeconfig() {
        return kubeconfig;
    }

    public Path projectRoot() {
        return projectRoot;
    }

    public String serverVersion() {
        return serverVersion;
    }

    /** A fresh namespace whose name starts with the prefix. */
    public String newNamespace(String prefix) {
        String name = prefix + "-" + names.incrementAndGet() + "-" + Long.toHexString(System.nanoTime() & 0xfffff);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
        return name;
    }

    /** A new KWOK worker named like a CKS node (`<cluster>-node-<hex>`), Ready before this returns. */
    public Node addWorker(String cluster) {
        return addNode(cluster, false, NODE_VERSION);
    }

    public Node addControlPlane(String cluster) {
        return addNode(cluster, true, NODE_VERSION);
    }

    public Node addNode(String cluster, boolean controlPlane, String kubeletVersion) {
        String name = createNode(cluster, controlPlane, kubeletVersion);
        return client.nodes().withName(name).waitUntilCondition(TestBed::isSchedulable, 60, TimeUnit.SECONDS);
    }

    private String createNode(String cluster, boolean controlPlane, String kubeletVersion) {
        String hex = String.format("%010x", (System.nanoTime() ^ ((long) names.incrementAndGet() << 36)) & 0xffffffffffL);
        String name = cluster + (controlPlane ? "-control-" : "-node-") + hex;
        String manifest = runQuietly("bash", "hack/testbed.sh", "node-manifest", name, controlPlane ? "control" : "node", kubeletVersion);
        Node node = client.getKubernetesSerialization().unmarshal(manifest, Node.class);
        client.nodes().resource(node).create();
        return name;
    }

    /**
     * Ready, and without the taint the node lifecycle controller puts on a node created without a Ready condition
     * ({@code node.kubernetes.io/not-ready}, NoSchedule). It takes the taint off only after KWOK has reported Ready
     * (0.4 s later on an idle bed, later on a busy one): pods placed in that window can only go to other workers.
     */
    static boolean isSchedulable(Node node) {
        return isReady(node) && (node.getSpec() == null || node.getSpec().getTaints() == null
                || node.getSpec().getTaints().stream().noneMatch(taint -> NOT_READY_TAINT.equals(taint.getKey())));
    }

    /** The events of one of our cluster-scoped CRs (they live in the default namespace), oldest first. */
    public List<io.fabric8.kubernetes.api.model.Event> eventsOf(String involvedName) {
        return client().v1().events().inNamespace("default").withField("involvedObject.name", involvedName).list().getItems();
    }

    /**
     * The operator's events on a Node, found as `kubectl describe node` finds them (kind Node, the node's name as
     * its uid, any namespace), oldest first: by time, then by name, which the recorder makes from a clock that only
     * moves on.
     */
    public List<io.fabric8.kubernetes.api.model.Event> nodeEventsOf(String node) {
        return client().v1().events().inAnyNamespace().withField("involvedObject.kind", "Node").withField("involvedObject.name", node)
                .withField("involvedObject.uid", node).withField("source", dev.cks.nodeops.common.EventRecorder.COMPONENT).list().getItems().stream()
                .sorted(java.util.Comparator.comparing(io.fabric8.kubernetes.api.model.Event::getFirstTimestamp)
                        .thenComparing(e -> e.getMetadata().getName()))
                .toList();
    }

    public static boolean isReady(Node node) {
        return node != null && node.getStatus() != null && node.getStatus().getConditions() != null
                && node.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private String runQuietly(String... command) {
        try {
            return run(projectRoot, null, Duration.ofMinutes(1), Map.of(), command);
        } catch (Exception e) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + e.getMessage(), e);
        }
    }

    /** Runs a command in the project root; stderr goes to the log (or is kept for the error), stdout is returned. */
    static String run(Path root, Path log, Duration timeout, String... command) throws IOException, InterruptedException {
        return run(root, log, timeout, Map.of(), command);
    }

    static String run(Path root, Path log, Duration timeout, Map<String, String> env, String... command) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(root.toFile());
        configuredKubernetesVersion().ifPresent(version -> builder.environment().put("K8S_VERSION", version));
        builder.environment().putAll(env);
        Path err = log != null ? log : Files.createTempFile("testbed", ".err");
        builder.redirectError(log != null ? ProcessBuilder.Redirect.appendTo(err.toFile()) : ProcessBuilder.Redirect.to(err.toFile()));
        Process process = builder.start();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish within " + timeout);
        }
        if (process.exitValue() != 0) {
            List<String> tail = new ArrayList<>(Files.readAllLines(err));
            String last = String.join("\n", tail.subList(Math.max(0, tail.size() - 15), tail.size()));
            throw new IOException(String.join(" ", command) + " exited " + process.exitValue() + ":\n" + last);
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    /**
     * Kills one process of the control plane ({@code kube-apiserver}, {@code etcd}, …) with SIGKILL, as a
     * crash or its host's death would; {@link #startComponent} brings the same process back.
     */
    public void stopComponent(String component) {
        runQuietly("bash", "hack/testbed.sh", "stop-component", name, component);
    }

    /**
     * Starts a stopped control-plane process again and waits until the API server answers /readyz, then until
     * KWOK acts on a new node's pods again ({@link #awaitKwokCaughtUp}).
     *
     * @return when the API server answered again
     */
    public Instant startComponent(String component) {
        runQuietly("bash", "hack/testbed.sh", "start-component", name, component);
        Instant answered = awaitApiServerReady(component);
        awaitKwokCaughtUp();
        System.out.printf("[testbed] KWOK ran a new node's pod %d s after the API server answered again%n",
                Duration.between(answered, Instant.now()).toSeconds());
        return answered;
    }

    private Instant awaitApiServerReady(String component) {
        Instant end = Instant.now().plus(Duration.ofMinutes(2));
        while (Instant.now().isBefore(end)) {
            try {
                if ("ok".equals(client.raw("/readyz"))) {
                    return Instant.now();
                }
            } catch (RuntimeException notYet) {
                // connection refused or 5xx while it starts
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("the API server was not ready 2 minutes after " + component + " started again");
    }

    /**
     * KWOK (v0.8) plays a pod only while its own cache holds the Lease of the pod's node, and does not look again
     * at a pod it skipped until the pod changes
     * (https://github.com/kubernetes-sigs/kwok/blob/v0.8.0/pkg/kwok/controllers/pod_controller.go#L499). After an
     * outage its Lease watch can come back a minute after the API server (client-go's reflector backs off), so a
     * worker added in between keeps a Job's pod Pending for good, where a kubelet would run it: one
     * NodeUpgradeOutageIT case per run failed so (docs/reliability.md, "Latest results"). Hence the bed is handed
     * back once a pod on a node added now runs, touched until it does.
     */
    private void awaitKwokCaughtUp() {
        // Not waited Ready: the probe's pod names its node, and KWOK runs it once it has seen the node's Lease.
        String node = createNode("kwok-probe", false, NODE_VERSION);
        Resource<Pod> pod = client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(node).endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.invalid/probe:1").endContainer().endSpec().build());
        pod.create();
        AtomicInteger touches = new AtomicInteger();
        try {
            Awaitility.await("KWOK runs a pod on the new node " + node).atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofSeconds(2))
                    .until(() -> {
                        Pod seen = pod.get();
                        if (seen.getStatus() != null && "Running".equals(seen.getStatus().getPhase())) {
                            return true;
                        }
                        pod.patch(PatchContext.of(PatchType.JSON_MERGE),
                                "{\"metadata\":{\"annotations\":{\"testbed.cks.dev/touch\":\"" + touches.incrementAndGet() + "\"}}}");
                        return false;
                    });
        } finally {
            pod.withGracePeriod(0).delete();
            client.nodes().withName(node).delete();
        }
    }

    /** Runs `hack/testbed.sh ARGS` (its progress goes to target/testbed-real.log); returns what it prints. */
    public String testbed(Duration timeout, String... args) {
        List<String> command = new ArrayList<>(List.of("bash", "hack/testbed.sh"));
        command.addAll(List.of(args));
        try {
            return run(projectRoot, projectRoot.resolve("target/testbed-real.log"), timeout, Map.of(), command.toArray(String[]::new));
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Where hack/testbed.sh keeps kubectl, helm and the control-plane binaries. */
    public Path binDir() {
        return Path.of(runQuietly("bash", "hack/testbed.sh", "bin").strip());
    }

    public record ToolResult(int exitCode, String output) {
    }

    /** Runs one of the bed's tools (kubectl, helm) against this cluster; returns stdout, throws with the output on failure. */
    public String tool(String tool, String... args) {
        ToolResult result = runTool(tool, args);
        if (result.exitCode() != 0) {
            throw new IllegalStateException(tool + " " + String.join(" ", args) + " exited " + result.exitCode() + ":\n" + result.output());
        }
        return result.output();
    }

    public ToolResult runTool(String tool, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binDir().resolve(tool).toString());
        command.addAll(List.of(args));
        try {
            ProcessBuilder builder = new ProcessBuilder(command).directory(projectRoot.toFile()).redirectErrorStream(true);
            builder.environment().put("KUBECONFIG", kubeconfig.toString());
            // kubectl caches API discovery per server for hours; a bed on a reused port would answer from an
            // earlier bed's CRDs (e.g. without their categories). One cache per test run.
            builder.environment().put("KUBECACHEDIR", projectRoot.resolve("target/kubectl-cache-" + ProcessHandle.current().pid()).toString());
            Process process = builder.start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish in 5 minutes");
            }
            return new ToolResult(process.exitValue(), out);
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command) + " could not run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * A kubeconfig that authenticates as the ServiceAccount with a token from the TokenRequest API,
     * so a process using it has exactly the RBAC the ServiceAccount has.
     */
    public Path kubeconfigForServiceAccount(String namespace, String serviceAccount) throws IOException {
        String token = client.serviceAccounts().inNamespace(namespace).withName(serviceAccount)
                .tokenRequest(new io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder()
                        .withNewSpec().withExpirationSeconds(3600L).endSpec().build())
                .getStatus().getToken();
        Config admin = Config.fromKubeconfig(Files.readString(kubeconfig));
        String ca = admin.getCaCertData() != null ? admin.getCaCertData()
                : java.util.Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(admin.getCaCertFile())));
        String yaml = "apiVersion: v1\nkind: Config\nclusters:\n- name: bed\n  cluster:\n    server: " + admin.getMasterUrl()
                + "\n    certificate-authority-data: " + ca + "\nusers:\n- name: " + serviceAccount + "\n  user:\n    token: " + token
                + "\ncontexts:\n- name: sa\n  context:\n    cluster: bed\n    user: " + serviceAccount + "\n    namespace: " + namespace
                + "\ncurrent-context: sa\n";
        Path file = projectRoot.resolve("target/kubeconfig-" + name + "-" + namespace + "-" + serviceAccount);
        Files.writeString(file, yaml);
        return file;
    }

    /**
     * A kubeconfig for the operator as it runs in a cluster: the chart's ServiceAccount with exactly the
     * chart's RBAC (rendered by Helm for the Secret and namespace in the operator's properties and applied
     * here), so a call the chart does not grant fails the test, and the audit log attributes every call
     * to the operator.
     */
    public Path operatorKubeconfig(Map<String, String> operatorProperties) throws IOException {
        return operatorKubeconfig(operatorProperties, OPERATOR_SERVICE_ACCOUNT);
    }

    /**
     * The same for a Helm release of another name: its own ServiceAccount and ClusterRole
     * ({@code <release>-cks-node-operator}), which a test may change without touching the other operators'.
     * In a namespace the audit policy does not watch, its calls stay out of LeastPrivilegeIT's proof.
     */
    public Path operatorKubeconfig(Map<String, String> operatorProperties, String release) throws IOException {
        String namespace = operatorProperties.getOrDefault("cks.namespace", OPERATOR_NAMESPACE);
        String secretNamespace = operatorProperties.getOrDefault("cks.cloudstack.secret-namespace", "kube-system");
        String secretName = operatorProperties.getOrDefault("cks.cloudstack.secret-name", "cloudstack-secret");
        String rbac = tool("helm", "template", release, CHART, "-n", namespace, "--kube-version", serverVersion,
                "--set", "cloudstack.secretNamespace=" + secretNamespace, "--set", "cloudstack.secretName=" + secretName,
                "--show-only", "templates/serviceaccount.yaml", "--show-only", "templates/rbac.yaml");
        Path manifest = projectRoot.resolve("target/operator-rbac-" + name + "-" + release + "-" + namespace + ".yaml");
        Files.writeString(manifest, rbac);
        tool("kubectl", "apply", "--server-side", "--force-conflicts", "--field-manager=testbed", "-f", manifest.toString());
        recordGrantedSecret(secretNamespace, secretName);
        return kubeconfigForServiceAccount(namespace, release.contains(OPERATOR_SERVICE_ACCOUNT) ? release : release + "-" + OPERATOR_SERVICE_ACCOUNT);
    }

    /** Records a CloudStack Secret the chart's RBAC grants to an operator a test installed with Helm itself. */
    public static void recordGrantedSecret(String namespace, String name) {
        if (GRANTED_SECRETS.add(namespace + "/" + name)) {
            TestRun.record(TestRun.GRANTED_SECRETS, namespace + "/" + name);
        }
    }

    /** namespace/name of every CloudStack Secret an operator of this run was granted (in every fork of it). */
    public static java.util.Set<String> grantedSecrets() {
        return TestRun.withRecorded(GRANTED_SECRETS, TestRun.GRANTED_SECRETS);
    }

    /** The API server's audit log (the operator's calls only, see {@link #AUDIT_POLICY}). */
    public Path auditLog() {
        return Path.of(runQuietly("bash", "hack/testbed.sh", "audit-log", name).strip());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        client.close();
        if (isReal()) {
            try {
                // The host is restored even when TESTBED_KEEP is set: the machine is shared.
                run(projectRoot, projectRoot.resolve("target/testbed-real.log"), Duration.ofMinutes(5), "bash", "hack/testbed.sh", "down", "--real");
            } catch (Exception e) {
                System.err.println("[testbed] the real node's teardown did not restore the host: " + e.getMessage());
            }
            return;
        }
        if (this != shared || "true".equals(System.getenv("TESTBED_KEEP"))) {
            return;
        }
        if (TestRun.JUDGED) {
            System.out.println("[testbed] bed " + name + " stays up for the judges of run " + TestRun.RUN + ", who tear it down");
            return;
        }
        if (otherBedsOfTheRun != null) {
            otherBedsOfTheRun.forEach(TestBed::close);
        }
        for (String bed : TestRun.JUDGES ? TestRun.recorded(TestRun.BEDS) : java.util.Set.of(name)) {
            try {
                run(projectRoot, projectRoot.resolve("target/testbed.log"), Duration.ofMinutes(2), Map.of(), "bash", "hack/testbed.sh", "down", bed);
            } catch (Exception e) {
                System.err.println("[testbed] could not stop the cluster " + bed + ": " + e.getMessage());
            }
        }
    }
}
