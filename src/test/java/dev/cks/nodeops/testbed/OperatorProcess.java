package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.cks.nodeops.operation.KillPoint;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * The packaged operator (target/quarkus-app) run as its own process against the test bed, the way
 * it runs in a cluster: tests can stop it gracefully or kill it half-way and start another.
 */
public final class OperatorProcess implements AutoCloseable {
    /**
     * A short leader Lease unless a test sets its own: tests kill operators and start new ones, which would
     * otherwise wait the production 150 s for a killed leader's Lease to expire.
     */
    /**
     * Short Lease timings, so that a killed operator's successor leads within half a minute; the renew
     * deadline still leaves 20 s for a loaded machine, where an operator's event loop was seen blocked for
     * 10 s (past its renew deadline the operator halts, see LeaseWatchdog).
     */
    public static final int TEST_LEASE_SECONDS = 30;
    /** The operator's Lease (LeaderElection) and the property that names a replica in it. */
    private static final String LEASE_NAME = "cks-node-operator-leader";
    private static final String IDENTITY_PROPERTY = "cks.leader-election.identity";
    public static final Map<String, String> TEST_LEASE = Map.of("cks.leader-election.lease-duration-seconds", Integer.toString(TEST_LEASE_SECONDS),
            "cks.leader-election.renew-deadline-seconds", "20", "cks.leader-election.retry-period-seconds", "2");

    private final Process process;
    private final ProcessBuilder builder;
    private final Path log;
    /** Where this process's output starts in the log, which earlier processes of the same name appended to. */
    private final long logStart;
    private final int httpPort;
    /** Where its leader Lease lives and the identity it holds it as, for {@link #expireItsLease}. */
    private final TestBed bed;
    private final String leaseNamespace;
    private final Optional<String> configuredIdentity;

    private OperatorProcess(Process process, ProcessBuilder builder, Path log, long logStart, int httpPort, TestBed bed, String leaseNamespace,
            Optional<String> configuredIdentity) {
        this.process = process;
        this.builder = builder;
        this.log = log;
        this.logStart = logStart;
        this.httpPort = httpPort;
        this.bed = bed;
        this.leaseNamespace = leaseNamespace;
        this.configuredIdentity = configuredIdentity;
    }

    /**
     * Starts the operator with the given Quarkus properties, as the chart's ServiceAccount with the chart's
     * RBAC (see {@link TestBed#operatorKubeconfig}), and waits until it reports ready.
     */
    public static OperatorProcess start(TestBed bed, String name, Map<String, String> properties) {
        try {
            return start(bed, bed.operatorKubeconfig(properties), name, properties);
        } catch (IOException e) {
            throw new IllegalStateException("could not give the operator the chart's ServiceAccount: " + e.getMessage(), e);
        }
    }

    /** Starts the operator authenticated by the given kubeconfig (e.g. a ServiceAccount's token). */
    public static OperatorProcess start(TestBed bed, Path kubeconfig, String name, Map<String, String> properties) {
        return start(bed, kubeconfig, name, properties, List.of());
    }

    /** The same with JVM options before the operator's properties (a benchmark runs it with the image's). */
    public static OperatorProcess start(TestBed bed, Path kubeconfig, String name, Map<String, String> properties, List<String> jvmOptions) {
        return start(bed, kubeconfig, name, properties, jvmOptions, Map.of());
    }

    /** The same with more environment variables (e.g. a shifted clock, {@link SkewedClock}). */
    public static OperatorProcess start(TestBed bed, Path kubeconfig, String name, Map<String, String> properties, List<String> jvmOptions,
            Map<String, String> environment) {
        Map<String, String> props = new LinkedHashMap<>(TEST_LEASE);
        props.putAll(properties);
        return launch(bed, kubeconfig, name, props, jvmOptions, environment);
    }

    /**
     * The operator as a pod's container runs it: configured only by the container's environment (the chart's, with
     * its Lease timings, not {@link #TEST_LEASE}); the one property added is its own HTTP port, as processes on one
     * machine cannot share the container's. Returns once the process runs, as a kubelet does not wait for readiness
     * to stop a container either.
     */
    public static OperatorProcess startAsContainer(TestBed bed, Path kubeconfig, String name, Map<String, String> environment) {
        return launch(bed, kubeconfig, name, Map.of(), List.of(), environment, false);
    }

    private static OperatorProcess launch(TestBed bed, Path kubeconfig, String name, Map<String, String> properties, List<String> jvmOptions,
            Map<String, String> environment) {
        return launch(bed, kubeconfig, name, properties, jvmOptions, environment, true);
    }

    private static OperatorProcess launch(TestBed bed, Path kubeconfig, String name, Map<String, String> properties, List<String> jvmOptions,
            Map<String, String> environment, boolean awaitReady) {
        Path root = bed.projectRoot();
        Path jar = root.resolve("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: integration tests run after `./mvnw package` (use `./mvnw verify`)");
        }
        try {
            int port = freePort();
            Path log = root.resolve("target/operator-" + name + ".log");
            long logStart = Files.exists(log) ? Files.size(log) : 0;
            Map<String, String> props = new LinkedHashMap<>();
            props.put("quarkus.http.port", Integer.toString(port));
            props.putAll(properties);
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            List<String> command = new ArrayList<>(List.of(java.toString()));
            command.addAll(OperatorJvm.options(root, java));
            command.addAll(jvmOptions);
            props.forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.addAll(List.of("-jar", jar.toString()));
            ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(environment);
            builder.environment().put("KUBECONFIG", kubeconfig.toString());
            Process process = builder.start();
            // The operator must not outlive the JVM that started it (Ctrl-C in the demo, a crashed test run).
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
            OperatorProcess operator = new OperatorProcess(process, builder, log, logStart, port, bed,
                    properties.getOrDefault("cks.namespace", TestBed.OPERATOR_NAMESPACE), Optional.ofNullable(properties.get(IDENTITY_PROPERTY)));
            if (!awaitReady) {
                return operator;
            }
            try {
                operator.awaitReady(Duration.ofSeconds(60));
            } catch (RuntimeException notReady) {
                // The caller never gets the process to close: stop it here, or it outlives the test run.
                operator.kill();
                throw notReady;
            }
            return operator;
        } catch (IOException e) {
            throw new IllegalStateException("could not start the operator: " + e.getMessage(), e);
        }
    }

    private void awaitReady(Duration timeout) {
        Instant end = Instant.now().plus(timeout);
        while (Instant.now().isBefore(end)) {
            if (!process.isAlive()) {
                if (haltedAtItsKillPoint()) {
                    // Armed at a point it reaches as soon as it leads (a Lease expired at once, expireItsLease), it may halt
                    // there before it reports ready: that halt is the test's to check (exit status and KILL POINT line).
                    return;
                }
                throw new IllegalStateException("the operator exited with " + process.exitValue() + "; see " + log + ":\n" + logTail());
            }
            if (httpStatus("/q/health/ready") == 200) {
                return;
            }
            pause(250);
        }
        throw new IllegalStateException("the operator was not ready within " + timeout + "; see " + log + ":\n" + logTail());
    }

    private boolean haltedAtItsKillPoint() {
        try {
            return process.exitValue() == KillPoint.EXIT_STATUS && output().contains("KILL POINT ");
        } catch (IOException e) {
            return false;
        }
    }

    public int httpStatus(String path) {
        try {
            HttpURLConnection connection = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + path).toURL().openConnection();
            connection.setConnectTimeout(1000);
            connection.setReadTimeout(5000);
            return connection.getResponseCode();
        } catch (IOException e) {
            return -1;
        }
    }

    public String httpGet(String path) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + path).toURL().openConnection();
        try (var in = connection.getInputStream()) {
            return new String(in.readAllBytes());
        }
    }

    public String logTail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** The operating system's id of the process, for reading its memory and CPU time from /proc. */
    public long pid() {
        return process.pid();
    }

    /** The image's JVM options (Dockerfile) and the chart's memory limit as the JVM sees it in that container. */
    public static List<String> imageJvmOptions(TestBed bed) throws IOException {
        String dockerfile = Files.readString(bed.projectRoot().resolve("Dockerfile"));
        java.util.regex.Matcher options = java.util.regex.Pattern.compile("JDK_JAVA_OPTIONS=\"([^\"]*)\"").matcher(dockerfile);
        java.util.regex.Matcher limit = java.util.regex.Pattern.compile("limits: \\{memory: (\\d+)Mi}")
                .matcher(Files.readString(bed.projectRoot().resolve("deploy/helm/cks-node-operator/values.yaml")));
        if (!options.find() || !limit.find()) {
            throw new IllegalStateException("the Dockerfile's JDK_JAVA_OPTIONS or the chart's memory limit cannot be read");
        }
        List<String> jvm = new ArrayList<>(List.of(options.group(1).split("\\s+")));
        jvm.add("-XX:MaxRAM=" + limit.group(1) + "m");
        return jvm;
    }

    /** CPU time the process has used so far (utime + stime of /proc/<pid>/stat), in seconds. */
    public double cpuSeconds() throws IOException {
        String[] stat = Files.readString(Path.of("/proc/" + pid() + "/stat")).replaceAll("^.*\\) ", "").split(" ");
        // utime and stime are fields 14 and 15 of the line, 12 and 13 after "(comm) "; clock ticks of 1/100 s
        return (Long.parseLong(stat[11]) + Long.parseLong(stat[12])) / 100.0;
    }

    /** The kB fields of /proc/<pid>/status (VmRSS, VmHWM, …), by name. */
    public Map<String, Long> procStatus() throws IOException {
        Map<String, Long> kb = new java.util.TreeMap<>();
        for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
            String[] parts = line.split(":\\s+");
            if (parts.length == 2 && parts[1].endsWith(" kB")) {
                kb.put(parts[0], Long.parseLong(parts[1].replace(" kB", "").strip()));
            }
        }
        return kb;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The exit code of a process that ended. */
    public int exitValue() {
        return process.exitValue();
    }

    /**
     * The same command started again after this process ended, as the kubelet restarts a Deployment's
     * container: without waiting for readiness. Its {@link #output()} includes this process's.
     */
    public OperatorProcess restarted() throws IOException {
        if (process.isAlive()) {
            throw new IllegalStateException("the operator process still runs");
        }
        Process next = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(next::destroyForcibly));
        return new OperatorProcess(next, builder, log, logStart, httpPort, bed, leaseNamespace, configuredIdentity);
    }

    public Path log() {
        return log;
    }

    /** What this process wrote, without the output of earlier processes of the same name. */
    public String output() throws IOException {
        byte[] all = Files.readAllBytes(log);
        return new String(all, (int) Math.min(logStart, all.length), (int) Math.max(0, all.length - logStart), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Waits until the process ends by itself (a kill point, a lost Lease); its exit status. */
    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the operator was still running after " + timeout + "; see " + log + ":\n" + logTail());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGSTOP or SIGCONT ({@code "STOP"}, {@code "CONT"}): the process frozen as in a long GC pause, and thawed. */
    public void signal(String signal) {
        try {
            int status = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start().waitFor();
            if (status != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " exited with " + status);
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not send SIG" + signal + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Whether the process is stopped (SIGSTOP), from its state in /proc. */
    public boolean isStopped() {
        try {
            String stat = Files.readString(Path.of("/proc/" + process.pid() + "/stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The leader Lease of this ended process (killed, halted at a kill point) expires now instead of a lease duration
     * after its last renewal, so that the next process leads at once. For tests of what the next process does after
     * a kill, not of how long it waits for the Lease: that wait is the same whatever the kill point (about
     * {@link #TEST_LEASE_SECONDS} s, half of a kill-point case), and LeaderElectionIT and LeaderFencingIT test it
     * with the real expiry. The Lease is changed as a stopping operator gives it up (LeaderElection#releaseLease): only
     * if this process holds it, on the resourceVersion read, so a Lease another replica took meanwhile is left alone.
     * The CloudStack signature window a new process waits out before a write it finds no trace of is not shortened.
     */
    public void expireItsLease() {
        if (process.isAlive()) {
            throw new IllegalStateException("the operator process still runs: only an ended process's Lease may expire early");
        }
        String identity = configuredIdentity.orElseGet(() -> builder.environment().getOrDefault("HOSTNAME", "operator") + "-" + process.pid());
        var lease = bed.client().leases().inNamespace(leaseNamespace).withName(LEASE_NAME);
        Lease held = lease.get();
        if (held == null || held.getSpec() == null || !identity.equals(held.getSpec().getHolderIdentity())) {
            return;
        }
        lease.patch(PatchContext.of(PatchType.JSON_MERGE), """
                {"metadata":{"resourceVersion":"%s"},"spec":{"holderIdentity":null,"leaseDurationSeconds":1}}"""
                .formatted(held.getMetadata().getResourceVersion()));
    }

    /** SIGKILL: the operator gets no chance to clean up, as when its node dies. */
    public void kill() {
        process.destroyForcibly();
        waitForExit();
    }

    /** SIGTERM, as Kubernetes stops a pod, and waits for the process to end by itself; its exit status. */
    public int terminate(Duration timeout) {
        process.destroy();
        return awaitExit(timeout);
    }

    @Override
    public void close() {
        process.destroy();
        waitForExit();
    }

    private void waitForExit() {
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
