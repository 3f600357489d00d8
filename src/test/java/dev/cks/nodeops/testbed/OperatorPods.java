package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.Awaitility;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * The kubelet of the chart's operator pods on the KWOK bed, where no container runs. KWOK marks the pods the
 * real scheduler bound Running and Ready; this class runs, for each such pod, the packaged operator as a process
 * of its own, configured only by that pod's container environment as the chart rendered it (the pod's name as
 * its leader identity, the chart's Lease timings, namespace and settings) and authenticated as the pod's
 * ServiceAccount. When the pod is deleted (an eviction, by whomever) its process gets SIGTERM, as the kubelet
 * stops a container. So an operator that evicts its own pod stops itself, and its successor is the pod the
 * ReplicaSet puts where the scheduler finds room.
 *
 * <p>Where it differs from a kubelet: KWOK reports a pod Ready before its process is (a process needs a few
 * seconds to answer its readiness probe), so a PodDisruptionBudget may count a replacement healthy a few
 * seconds early; and KWOK removes a deleted pod after at most its grace period, whether or not its process
 * has ended yet, so a drain may see the node empty while an evicted replica is still stopping (and may, in
 * those seconds, take a Lease its leader let go of).
 */
public final class OperatorPods implements AutoCloseable {
    /** One process of one pod: where the scheduler put the pod, and how the process ended (null while it runs). */
    public record Run(String pod, String node, Instant started, Instant stopped, Integer exitStatus, OperatorProcess process) {
    }

    private static final String LEASE = "cks-node-operator-leader";

    private final TestBed bed;
    private final KubernetesClient client;
    private final String namespace;
    private final Map<String, String> selector;
    private final Map<String, CompletableFuture<OperatorProcess>> processes = new ConcurrentHashMap<>();
    private final Map<String, Run> runs = new ConcurrentHashMap<>();
    private final Map<String, String> nodeOfPod = new ConcurrentHashMap<>();
    private final List<String> holders = new CopyOnWriteArrayList<>();
    private final List<String> deleted = new CopyOnWriteArrayList<>();
    private final Map<String, Boolean> healthy = new ConcurrentHashMap<>();
    private final AtomicInteger fewestHealthy = new AtomicInteger(Integer.MAX_VALUE);
    // Starting a process waits for its readiness: never on the informer's thread, nor in the way of a stop.
    private final ExecutorService starting = Executors.newFixedThreadPool(2);
    private final ExecutorService stopping = Executors.newCachedThreadPool();
    private final SharedIndexInformer<Pod> podInformer;
    private final SharedIndexInformer<Lease> leaseInformer;
    private volatile boolean following;
    private volatile boolean closed;
    private Path kubeconfig;

    /**
     * Watches the pods of the Deployment the selector names in the namespace; no process runs until
     * {@link #startOn} or {@link #follow}.
     */
    public OperatorPods(TestBed bed, String namespace, Map<String, String> selector) {
        this.bed = bed;
        this.client = bed.client();
        this.namespace = namespace;
        this.selector = selector;
        this.leaseInformer = client.leases().inNamespace(namespace).withName(LEASE).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Lease lease) {
                recordHolder(lease);
            }

            @Override
            public void onUpdate(Lease before, Lease lease) {
                recordHolder(lease);
            }

            @Override
            public void onDelete(Lease lease, boolean finalStateUnknown) {
            }
        });
        this.podInformer = client.pods().inNamespace(namespace).withLabels(selector).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                seen(pod);
            }

            @Override
            public void onUpdate(Pod before, Pod pod) {
                seen(pod);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                healthy.remove(pod.getMetadata().getName());
                stop(pod.getMetadata().getName());
            }
        });
    }

    /** Runs the process of the pod the scheduler bound to this node (the kubelet of that node started first); its pod's name. */
    public String startOn(String node) {
        Pod pod = podInformer.getStore().list().stream()
                .filter(p -> node.equals(p.getSpec().getNodeName()) && p.getMetadata().getDeletionTimestamp() == null).findFirst()
                .orElseThrow(() -> new IllegalStateException("no operator pod on " + node + ": " + placement()));
        start(pod).join();
        return pod.getMetadata().getName();
    }

    /** From now on every bound pod runs its process, those already there included. */
    public void follow() {
        following = true;
        podInformer.getStore().list().forEach(this::seen);
    }

    private synchronized void seen(Pod pod) {
        String name = pod.getMetadata().getName();
        boolean deleted = pod.getMetadata().getDeletionTimestamp() != null;
        healthy.put(name, !deleted && isReady(pod));
        int count = (int) healthy.values().stream().filter(Boolean::booleanValue).count();
        if (processes.size() > 0 || following) {
            fewestHealthy.accumulateAndGet(count, Math::min);
        }
        if (deleted) {
            stop(name);
        } else if (following && pod.getSpec().getNodeName() != null && !processes.containsKey(name)) {
            start(pod);
        }
    }

    private static boolean isReady(Pod pod) {
        return pod.getStatus() != null && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private synchronized CompletableFuture<OperatorProcess> start(Pod pod) {
        String name = pod.getMetadata().getName();
        return processes.computeIfAbsent(name, n -> {
            nodeOfPod.put(name, pod.getSpec().getNodeName());
            Map<String, String> environment = environmentOf(pod);
            Path config = kubeconfigOf(pod);
            return CompletableFuture.supplyAsync(() -> {
                if (closed) {
                    throw new IllegalStateException("closed");
                }
                OperatorProcess process = OperatorProcess.startAsContainer(bed, config, name, environment);
                runs.put(name, new Run(name, pod.getSpec().getNodeName(), Instant.now(), null, null, process));
                return process;
            }, starting);
        });
    }

    private void stop(String pod) {
        if (!deleted.contains(pod)) {
            deleted.add(pod);
        }
        CompletableFuture<OperatorProcess> process = processes.get(pod);
        if (process == null) {
            return;
        }
        process.thenAcceptAsync(running -> {
            if (!running.isAlive()) {
                return;
            }
            // As the kubelet: SIGTERM, then SIGKILL after the pod's grace period (the chart's is the default 30 s).
            try {
                running.terminate(Duration.ofSeconds(30));
            } catch (IllegalStateException stillRunning) {
                running.kill();
            }
            runs.computeIfPresent(pod, (name, run) -> new Run(name, run.node(), run.started(), Instant.now(), running.exitValue(), running));
        }, stopping);
    }

    /** The container's environment as the kubelet gives it: values, and the downward API's pod fields. */
    private static Map<String, String> environmentOf(Pod pod) {
        Container container = pod.getSpec().getContainers().get(0);
        Map<String, String> environment = new java.util.LinkedHashMap<>();
        for (EnvVar variable : Objects.requireNonNullElse(container.getEnv(), List.<EnvVar>of())) {
            if (variable.getValueFrom() == null) {
                environment.put(variable.getName(), Objects.requireNonNullElse(variable.getValue(), ""));
                continue;
            }
            String field = variable.getValueFrom().getFieldRef() == null ? null : variable.getValueFrom().getFieldRef().getFieldPath();
            environment.put(variable.getName(), switch (Objects.requireNonNullElse(field, "")) {
                case "metadata.name" -> pod.getMetadata().getName();
                case "metadata.namespace" -> pod.getMetadata().getNamespace();
                case "spec.nodeName" -> pod.getSpec().getNodeName();
                default -> throw new IllegalStateException("the chart's container takes " + variable.getName() + " from " + variable.getValueFrom()
                        + ", which this stand-in kubelet does not provide");
            });
        }
        return environment;
    }

    private synchronized Path kubeconfigOf(Pod pod) {
        if (kubeconfig == null) {
            try {
                kubeconfig = bed.kubeconfigForServiceAccount(namespace, pod.getSpec().getServiceAccountName());
            } catch (IOException e) {
                throw new IllegalStateException("could not sign in as the pod's ServiceAccount: " + e.getMessage(), e);
            }
        }
        return kubeconfig;
    }

    private void recordHolder(Lease lease) {
        String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
        synchronized (holders) {
            if (holder != null && (holders.isEmpty() || !holders.get(holders.size() - 1).equals(holder))) {
                holders.add(holder);
            }
        }
    }

    /** Each identity that held the leader Lease, in order (a pod's name), without the moments nobody held it. */
    public List<String> holders() {
        return List.copyOf(holders);
    }

    /** The pods in the order they were deleted (evicted). */
    public List<String> deleted() {
        return List.copyOf(deleted);
    }

    /** The node the scheduler had bound the pod to when its process started. */
    public String nodeOf(String pod) {
        return nodeOfPod.get(pod);
    }

    /** Every process this class ran, those still running included, in no particular order. */
    public List<Run> runs() {
        return List.copyOf(runs.values());
    }

    /**
     * The fewest pods of the Deployment that were Ready and not deleted at once, from the first process on: what
     * its PodDisruptionBudget protects.
     */
    public int fewestHealthy() {
        return fewestHealthy.get();
    }

    /** Where the pods are: {@code name@node (deleted)}. */
    public List<String> placement() {
        List<String> placed = new ArrayList<>();
        podInformer.getStore().list().forEach(p -> placed.add(p.getMetadata().getName() + "@" + p.getSpec().getNodeName()
                + (p.getMetadata().getDeletionTimestamp() != null ? " (deleted)" : "")));
        return placed;
    }

    /**
     * Waits until the processes match the pods: a running process for each pod that is not deleted, and every
     * process of a deleted pod ended.
     */
    public void awaitSettled(Duration within) {
        Awaitility.await("a process runs for each operator pod left, and only for those").atMost(within).until(() -> {
            List<Pod> pods = podInformer.getStore().list();
            return pods.stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                    .allMatch(p -> runs.containsKey(p.getMetadata().getName()) && runs.get(p.getMetadata().getName()).stopped() == null)
                    && runs.values().stream().allMatch(run -> run.stopped() != null || pods.stream()
                            .anyMatch(p -> p.getMetadata().getName().equals(run.pod()) && p.getMetadata().getDeletionTimestamp() == null));
        });
    }

    /** The pods, the processes and the Lease's holders, for a test's output. */
    public String describe() {
        return "operator pods " + placement() + "; processes " + runs.values().stream()
                .map(r -> r.pod() + "@" + r.node() + (r.stopped() == null ? " running" : " exited " + r.exitStatus())).toList()
                + "; Lease holders " + holders.stream().map(h -> h + "@" + nodeOf(h)).toList();
    }

    @Override
    public void close() {
        closed = true;
        following = false;
        podInformer.close();
        leaseInformer.close();
        processes.values().forEach(process -> process.thenAccept(OperatorProcess::close).exceptionally(notStarted -> null));
        starting.shutdown();
        stopping.shutdown();
        try {
            starting.awaitTermination(90, TimeUnit.SECONDS);
            stopping.awaitTermination(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        processes.values().forEach(process -> process.thenAccept(OperatorProcess::close).exceptionally(notStarted -> null));
    }
}
