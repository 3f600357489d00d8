package dev.cks.nodeops.realnode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Watches one NodeUpgrade of the real node from the outside while it runs: the API server's
 * readiness every 100 ms (its outages while kubeadm restarts it), the NodeUpgrade's and the node's
 * state every 250 ms (each change with its time), and `kubectl get nu -w` as a cluster owner runs it
 * (started again whenever it ends, as the owner would; each end is noted in its output).
 */
final class UpgradeWatch implements AutoCloseable {
    /** A change of one observed value: subject is e.g. "nu", "node", "iso", "kubelet". */
    record Change(Instant at, String subject, String value) {
    }

    /** The API server not ready from start (first failed probe) to end (first good probe after). */
    record Outage(Instant start, Instant end, String firstError) {
        Duration duration() {
            return Duration.between(start, end);
        }
    }

    private final TestBed bed;
    private final String nodeUpgrade;
    private final String node;
    private final Path dir;
    private final KubernetesClient probe;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Change> changes = new CopyOnWriteArrayList<>();
    private final List<Outage> outages = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile Instant outageStart;
    private volatile String outageError;
    private volatile Process kubectlWatch;

    UpgradeWatch(TestBed bed, String nodeUpgrade, String node, Path dir) throws IOException {
        this.bed = bed;
        this.nodeUpgrade = nodeUpgrade;
        this.node = node;
        this.dir = dir;
        Files.createDirectories(dir);
        Files.deleteIfExists(dir.resolve("kubectl-get-nu-w.txt"));
        Config config = Config.fromKubeconfig(Files.readString(bed.kubeconfig()));
        config.setConnectionTimeout(1000);
        config.setRequestTimeout(1000);
        config.setRequestRetryBackoffLimit(0);
        this.probe = new KubernetesClientBuilder().withConfig(config).build();
        start("apiserver-probe", this::probeApiServer);
        start("state-sampler", this::sampleState);
        start("kubectl-get-nu-w", this::watchLikeAnOwner);
    }

    private void start(String name, Runnable body) {
        Thread thread = new Thread(body, "upgrade-watch-" + name);
        thread.setDaemon(true);
        thread.start();
        threads.add(thread);
    }

    private void probeApiServer() {
        while (!stop.get()) {
            Instant at = Instant.now();
            try {
                String answer = probe.raw("/readyz");
                if (!"ok".equals(answer == null ? null : answer.strip())) {
                    throw new IllegalStateException("/readyz answered " + answer);
                }
                if (outageStart != null) {
                    outages.add(new Outage(outageStart, at, outageError));
                    outageStart = null;
                }
            } catch (RuntimeException e) {
                if (outageStart == null) {
                    outageStart = at;
                    outageError = rootMessage(e);
                }
            }
            pause(100);
        }
    }

    private void sampleState() {
        Map<String, String> last = new LinkedHashMap<>();
        while (!stop.get()) {
            try {
                Map<String, String> now = new LinkedHashMap<>();
                NodeUpgrade upgrade = probe.resources(NodeUpgrade.class).withName(nodeUpgrade).get();
                if (upgrade != null && upgrade.getStatus() != null) {
                    now.put("nu", String.valueOf(upgrade.getStatus().getPhase()));
                    upgrade.getStatus().getNodes().stream().filter(n -> node.equals(n.getName())).findFirst().ifPresent(n -> {
                        now.put("node", String.valueOf(n.getPhase()));
                        now.put("iso", String.valueOf(n.getIsoState()));
                    });
                }
                Node current = probe.nodes().withName(node).get();
                if (current != null) {
                    now.put("ready", Boolean.toString(TestBed.isReady(current)));
                    now.put("kubelet", current.getStatus().getNodeInfo().getKubeletVersion());
                    now.put("unschedulable", Boolean.toString(Boolean.TRUE.equals(current.getSpec().getUnschedulable())));
                }
                Instant at = Instant.now();
                now.forEach((subject, value) -> {
                    if (!value.equals(last.get(subject))) {
                        changes.add(new Change(at, subject, value));
                        last.put(subject, value);
                    }
                });
            } catch (RuntimeException e) {
                // The API server is restarting: the probe records that; this sample is lost.
            }
            pause(250);
        }
    }

    private void watchLikeAnOwner() {
        Path out = dir.resolve("kubectl-get-nu-w.txt");
        while (!stop.get()) {
            try {
                ProcessBuilder builder = new ProcessBuilder(bed.binDir().resolve("kubectl").toString(), "get", "nu", nodeUpgrade, "-w")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
                builder.environment().put("KUBECONFIG", bed.kubeconfig().toString());
                kubectlWatch = builder.start();
                int exit = kubectlWatch.waitFor();
                if (!stop.get()) {
                    Files.writeString(out, "# " + Instant.now() + ": kubectl get nu -w ended (exit " + exit + "); started again\n",
                            java.nio.file.StandardOpenOption.APPEND);
                }
            } catch (IOException e) {
                pause(1000);
            } catch (InterruptedException e) {
                return;
            }
            pause(500);
        }
    }

    List<Change> changes() {
        return List.copyOf(changes);
    }

    /** Outages seen so far; one still going on is reported up to now. */
    List<Outage> outages() {
        List<Outage> all = new ArrayList<>(outages);
        if (outageStart != null) {
            all.add(new Outage(outageStart, Instant.now(), outageError + " (still going on)"));
        }
        return all;
    }

    /** The first time subject took a value matching the predicate. */
    Optional<Instant> first(String subject, Predicate<String> value) {
        return changes.stream().filter(c -> c.subject().equals(subject) && value.test(c.value())).map(Change::at).findFirst();
    }

    Optional<Instant> first(String subject, String value) {
        return first(subject, value::equals);
    }

    boolean everSaw(String subject, String value) {
        return first(subject, value).isPresent();
    }

    Path dir() {
        return dir;
    }

    String nodeName() {
        return node;
    }

    @Override
    public void close() {
        stop.set(true);
        Process watch = kubectlWatch;
        if (watch != null) {
            watch.destroy();
        }
        for (Thread thread : threads) {
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        probe.close();
    }

    static UpgradeNodeStatus nodeStatus(NodeUpgrade upgrade, String node) {
        return upgrade.getStatus().getNodes().stream().filter(n -> node.equals(n.getName())).findFirst().orElseThrow();
    }

    private static String rootMessage(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
