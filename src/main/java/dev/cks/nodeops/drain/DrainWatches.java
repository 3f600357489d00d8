package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * Watches of what draining nodes wait for, one set per node being drained: the node's pods (field
 * selector {@code spec.nodeName}) and the PodDisruptionBudgets of the namespaces those pods are in. A
 * drain step reads them instead of listing, and the watches wake the drain's owner the moment a pod
 * leaves the node or a budget allows more disruptions, instead of the owner looking again every second.
 *
 * <p>A node's watches start with its first drain step and stop when its drain ends ({@link #stop}), when
 * no step has read them for {@link #IDLE_AFTER} (an operation paused, or gone without giving the node
 * back), and all of them when the operator stops ({@link #close}).
 */
public final class DrainWatches implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(DrainWatches.class);
    /** How long a watch may take to start (its first list); beyond it the step lists instead. */
    static final Duration START_WITHIN = Duration.ofSeconds(30);
    /** A node's watches that no drain step has read for this long are stopped. */
    static final Duration IDLE_AFTER = Duration.ofMinutes(5);
    /** The key of the one cluster-wide budget watch that replaces per-namespace ones. */
    private static final String ALL_NAMESPACES = "";

    private final KubernetesClient client;
    private final Map<String, NodeWatch> nodes = new ConcurrentHashMap<>();

    /**
     * @param client the operator's client: informers need its retries of 429 (see {@link DrainClient})
     */
    public DrainWatches(KubernetesClient client) {
        this.client = client;
    }

    /**
     * The watches of the node, started now if they are not running (that blocks for their first list).
     * Watches of other nodes idle for {@link #IDLE_AFTER} are stopped on the way.
     *
     * @param wake called (on an informer thread) when something the drain waits for happened
     * @throws KubernetesClientException when the watch cannot start (the step then lists)
     */
    NodeWatch of(String node, Runnable wake, Instant now) {
        nodes.entrySet().removeIf(e -> {
            boolean idle = !e.getKey().equals(node) && e.getValue().idleSince(now.minus(IDLE_AFTER));
            if (idle) {
                LOG.infof("Stopping the drain watches of node %s: no drain step read them for %s", e.getKey(), IDLE_AFTER);
                e.getValue().close();
            }
            return idle;
        });
        NodeWatch watch = nodes.get(node);
        if (watch == null) {
            watch = new NodeWatch(node);
            nodes.put(node, watch);
        }
        try {
            watch.use(wake, now);
        } catch (KubernetesClientException e) {
            stop(node);
            throw e;
        }
        return watch;
    }

    /** Stops the node's watches (its drain ended, or the node was given back); nothing when none run. */
    public void stop(String node) {
        NodeWatch watch = nodes.remove(node);
        if (watch != null) {
            watch.close();
        }
    }

    /** The nodes whose watches run. */
    public Set<String> watching() {
        return Set.copyOf(nodes.keySet());
    }

    @Override
    public void close() {
        new ArrayList<>(nodes.keySet()).forEach(this::stop);
    }

    /** The watches of one node. Steps of one node's drain come one at a time; informer threads only read and wake. */
    final class NodeWatch {
        private final String node;
        private SharedIndexInformer<Pod> pods;
        private final Map<String, SharedIndexInformer<PodDisruptionBudget>> budgets = new HashMap<>();
        private final SpentBudgets spent = new SpentBudgets();
        private volatile Runnable wake = () -> { };
        private volatile Instant lastRead;

        private NodeWatch(String node) {
            this.node = node;
        }

        private synchronized void use(Runnable wakeWith, Instant now) {
            this.wake = wakeWith;
            this.lastRead = now;
            if (pods == null) {
                pods = started(client.pods().inAnyNamespace().withField("spec.nodeName", node).runnableInformer(0),
                        new Wakes<>(false), "the pods of node " + node);
            }
        }

        private boolean idleSince(Instant since) {
            return lastRead != null && lastRead.isBefore(since);
        }

        /** Whether every watch of the node is connected; a watch that stopped (e.g. forbidden) would show a stale view. */
        boolean watching() {
            return pods.isWatching() && budgets.values().stream().allMatch(SharedIndexInformer::isWatching);
        }

        /** The node's pods as the watch last saw them. */
        List<Pod> pods() {
            return pods.getStore().list();
        }

        /**
         * The budgets of these namespaces as the watch shows them, less what this drain spent that they do
         * not show yet ({@link SpentBudgets}). Starts watches for namespaces not watched yet: one per
         * namespace, or one cluster-wide watch once more than {@value NodeDrainer#MAX_NAMESPACES_LISTED_ONE_BY_ONE}
         * namespaces are involved.
         */
        synchronized Map<String, List<PodDisruptionBudget>> budgets(Set<String> namespaces, Instant now) {
            Set<String> missing = new TreeSet<>(namespaces);
            missing.removeAll(budgets.keySet());
            if (!budgets.containsKey(ALL_NAMESPACES) && !missing.isEmpty()) {
                if (budgets.size() + missing.size() > NodeDrainer.MAX_NAMESPACES_LISTED_ONE_BY_ONE) {
                    SharedIndexInformer<PodDisruptionBudget> all = started(
                            client.policy().v1().podDisruptionBudget().inAnyNamespace().runnableInformer(0), new Wakes<>(true),
                            "the PodDisruptionBudgets of all namespaces");
                    budgets.values().forEach(SharedIndexInformer::stop);
                    budgets.clear();
                    budgets.put(ALL_NAMESPACES, all);
                } else {
                    for (String namespace : missing) {
                        budgets.put(namespace, started(client.policy().v1().podDisruptionBudget().inNamespace(namespace).runnableInformer(0),
                                new Wakes<>(true), "the PodDisruptionBudgets of namespace " + namespace));
                    }
                }
            }
            Map<String, List<PodDisruptionBudget>> byNamespace = new LinkedHashMap<>();
            namespaces.stream().sorted().forEach(n -> byNamespace.put(n, new ArrayList<>()));
            List<PodDisruptionBudget> seen = budgets.values().stream().flatMap(i -> i.getStore().list().stream())
                    .filter(b -> byNamespace.containsKey(b.getMetadata().getNamespace())).toList();
            spent.applyTo(seen, now).forEach(b -> byNamespace.get(b.getMetadata().getNamespace()).add(b));
            return byNamespace;
        }

        private synchronized void observed(PodDisruptionBudget version) {
            spent.observed(version);
        }

        /** The server accepted these evictions: they count against the budgets until the watch shows them. */
        synchronized void spent(List<Pod> evicted, Map<String, List<PodDisruptionBudget>> budgetsRead, Instant now) {
            List<PodDisruptionBudget> all = budgetsRead.values().stream().flatMap(List::stream).toList();
            evicted.forEach(pod -> spent.spent(pod, all, now));
        }

        private synchronized void close() {
            if (pods != null) {
                pods.stop();
            }
            budgets.values().forEach(SharedIndexInformer::stop);
            budgets.clear();
        }

        private <T> SharedIndexInformer<T> started(SharedIndexInformer<T> informer, ResourceEventHandler<T> handler, String what) {
            informer.addEventHandler(handler);
            try {
                informer.start().toCompletableFuture().get(START_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
                return informer;
            } catch (InterruptedException e) {
                informer.stop();
                Thread.currentThread().interrupt();
                throw new KubernetesClientException("interrupted while starting the watch of " + what);
            } catch (ExecutionException | TimeoutException e) {
                informer.stop();
                Throwable cause = e.getCause() == null ? e : e.getCause();
                throw new KubernetesClientException("could not watch " + what + ": " + cause.getMessage(), cause);
            }
        }

        /** What wakes the drain: a pod leaving the node; a budget allowing more disruptions, or going away. */
        private final class Wakes<T> implements ResourceEventHandler<T> {
            private final boolean budget;

            Wakes(boolean budget) {
                this.budget = budget;
            }

            @Override
            public void onAdd(T added) {
                // A pod or budget appearing does not let the drain move on; the next step sees it.
                if (budget) {
                    observed((PodDisruptionBudget) added);
                }
            }

            @Override
            public void onUpdate(T older, T newer) {
                if (budget) {
                    observed((PodDisruptionBudget) newer);
                    if (DisruptionBudgets.loosened((PodDisruptionBudget) older, (PodDisruptionBudget) newer)) {
                        wake.run();
                    }
                }
            }

            @Override
            public void onDelete(T deleted, boolean finalStateUnknown) {
                wake.run();
            }
        }
    }
}
