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
 * Watches of what draining nodes wait for: each node's pods (field selector {@code spec.nodeName}) and the
 * PodDisruptionBudgets of the namespaces those pods are in. A drain step reads them instead of listing,
 * and the watches wake the drain's owner the moment a pod leaves the node or a budget allows more
 * disruptions, instead of the owner looking again every second.
 *
 * <p>A node's pod watch starts with its first drain step and stops when its drain ends ({@link #stop}),
 * when no step has read it for {@link #IDLE_AFTER} (an operation paused, or gone without giving the node
 * back), and all watches when the operator stops ({@link #close}). The budget watches are shared by the
 * nodes drained at once (a NodeUpgrade with maxUnavailable above 1, or operations side by side): one per
 * namespace, not one per namespace and node, and an eviction one drain spent counts for every drain until
 * the budget's watch shows it. A budget watch stops when no drain reads its namespace any more.
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
    private final BudgetWatches budgets = new BudgetWatches();

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

    /** The namespaces whose budgets are watched (empty when no drain reads any), {@code ""} for all namespaces at once. */
    Set<String> budgetWatches() {
        return budgets.watched();
    }

    @Override
    public void close() {
        new ArrayList<>(nodes.keySet()).forEach(this::stop);
    }

    /** The watches of one node. Steps of one node's drain come one at a time; informer threads only read and wake. */
    final class NodeWatch {
        private final String node;
        private SharedIndexInformer<Pod> pods;
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
                        new PodWakes(), "the pods of node " + node);
            }
        }

        private boolean idleSince(Instant since) {
            return lastRead != null && lastRead.isBefore(since);
        }

        /** Whether every watch of the node is connected; a watch that stopped (e.g. forbidden) would show a stale view. */
        boolean watching() {
            return pods.isWatching() && budgets.watching(this);
        }

        /** The node's pods as the watch last saw them. */
        List<Pod> pods() {
            return pods.getStore().list();
        }

        /**
         * The budgets of these namespaces as the watches show them, less the evictions of any drain that
         * they do not show yet ({@link SpentBudgets}). Starts watches for namespaces not watched yet.
         */
        Map<String, List<PodDisruptionBudget>> budgets(Set<String> namespaces, Instant now) {
            return budgets.read(this, namespaces, now);
        }

        /** The server accepted these evictions: they count against the budgets until the watch shows them. */
        void spent(List<Pod> evicted, Map<String, List<PodDisruptionBudget>> budgetsRead, Instant now) {
            budgets.spent(evicted, budgetsRead, now);
        }

        private synchronized void close() {
            if (pods != null) {
                pods.stop();
            }
            budgets.release(this);
        }

        /** A pod leaving the node wakes its drain; a pod appearing does not let the drain move on (the next step sees it). */
        private final class PodWakes implements ResourceEventHandler<Pod> {
            @Override
            public void onAdd(Pod added) {
            }

            @Override
            public void onUpdate(Pod older, Pod newer) {
            }

            @Override
            public void onDelete(Pod deleted, boolean finalStateUnknown) {
                wake.run();
            }
        }
    }

    /**
     * The budget watches of every node being drained, and the evictions they do not show yet. One lock
     * serialises reads, spends and what the watches deliver; it never waits for a node's lock.
     */
    private final class BudgetWatches {
        private final Map<String, SharedIndexInformer<PodDisruptionBudget>> informers = new HashMap<>();
        /** Per node being drained: the namespaces whose budgets its steps read. */
        private final Map<NodeWatch, Set<String>> readers = new HashMap<>();
        private final SpentBudgets spent = new SpentBudgets();

        /**
         * One watch per namespace, or one cluster-wide watch once more than
         * {@value BudgetReader#MAX_NAMESPACES_LISTED_ONE_BY_ONE} namespaces are involved.
         */
        synchronized Map<String, List<PodDisruptionBudget>> read(NodeWatch reader, Set<String> namespaces, Instant now) {
            Set<String> missing = new TreeSet<>(namespaces);
            missing.removeAll(informers.keySet());
            try {
                if (!informers.containsKey(ALL_NAMESPACES) && !missing.isEmpty()) {
                    if (informers.size() + missing.size() > BudgetReader.MAX_NAMESPACES_LISTED_ONE_BY_ONE) {
                        SharedIndexInformer<PodDisruptionBudget> all = started(
                                client.policy().v1().podDisruptionBudget().inAnyNamespace().runnableInformer(0), new BudgetWakes(),
                                "the PodDisruptionBudgets of all namespaces");
                        informers.values().forEach(SharedIndexInformer::stop);
                        informers.clear();
                        informers.put(ALL_NAMESPACES, all);
                    } else {
                        for (String namespace : missing) {
                            informers.put(namespace, started(client.policy().v1().podDisruptionBudget().inNamespace(namespace).runnableInformer(0),
                                    new BudgetWakes(), "the PodDisruptionBudgets of namespace " + namespace));
                        }
                    }
                }
            } finally {
                // Only namespaces whose watch runs: one that could not start is tried again at the reader's next step.
                namespaces.stream().filter(n -> informers.containsKey(n) || informers.containsKey(ALL_NAMESPACES))
                        .forEach(readers.computeIfAbsent(reader, r -> new TreeSet<>())::add);
            }
            Map<String, List<PodDisruptionBudget>> byNamespace = new LinkedHashMap<>();
            namespaces.stream().sorted().forEach(n -> byNamespace.put(n, new ArrayList<>()));
            List<PodDisruptionBudget> seen = informers.values().stream().flatMap(i -> i.getStore().list().stream())
                    .filter(b -> byNamespace.containsKey(b.getMetadata().getNamespace())).toList();
            spent.applyTo(seen, now).forEach(b -> byNamespace.get(b.getMetadata().getNamespace()).add(b));
            return byNamespace;
        }

        synchronized void spent(List<Pod> evicted, Map<String, List<PodDisruptionBudget>> budgetsRead, Instant now) {
            List<PodDisruptionBudget> all = budgetsRead.values().stream().flatMap(List::stream).toList();
            evicted.forEach(pod -> spent.spent(pod, all, now));
        }

        synchronized boolean watching(NodeWatch reader) {
            return readers.getOrDefault(reader, Set.of()).stream()
                    .map(n -> informers.getOrDefault(n, informers.get(ALL_NAMESPACES)))
                    .allMatch(i -> i != null && i.isWatching());
        }

        /** The node's drain reads no budget any more: watches no other drain reads stop. */
        synchronized void release(NodeWatch reader) {
            readers.remove(reader);
            Set<String> read = readers.values().stream().flatMap(Set::stream).collect(java.util.stream.Collectors.toSet());
            informers.entrySet().removeIf(e -> {
                boolean unread = e.getKey().equals(ALL_NAMESPACES) ? readers.isEmpty() : !read.contains(e.getKey());
                if (unread) {
                    e.getValue().stop();
                }
                return unread;
            });
        }

        synchronized Set<String> watched() {
            return Set.copyOf(informers.keySet());
        }

        private synchronized void observed(PodDisruptionBudget version) {
            spent.observed(version);
        }

        /** The drains that read the budget's namespace. */
        private synchronized List<NodeWatch> readersOf(PodDisruptionBudget budget) {
            return readers.entrySet().stream().filter(e -> e.getValue().contains(budget.getMetadata().getNamespace()))
                    .map(Map.Entry::getKey).toList();
        }

        /** A budget allowing more disruptions, or going away, wakes the drains that read its namespace. */
        private final class BudgetWakes implements ResourceEventHandler<PodDisruptionBudget> {
            @Override
            public void onAdd(PodDisruptionBudget added) {
                observed(added);
            }

            @Override
            public void onUpdate(PodDisruptionBudget older, PodDisruptionBudget newer) {
                observed(newer);
                if (DisruptionBudgets.loosened(older, newer)) {
                    readersOf(newer).forEach(reader -> reader.wake.run());
                }
            }

            @Override
            public void onDelete(PodDisruptionBudget deleted, boolean finalStateUnknown) {
                readersOf(deleted).forEach(reader -> reader.wake.run());
            }
        }
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
}
