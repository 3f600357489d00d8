package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.drain.DrainEscalation;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainPreflight;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.DrainWatches;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.EvictionApi;
import dev.cks.nodeops.drain.EvictionListener;
import dev.cks.nodeops.drain.NodeDrainer;
import dev.cks.nodeops.drain.OwnPod;
import dev.cks.nodeops.drain.PodFilters;
import dev.cks.nodeops.drain.PodVerdict;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.nodes.Cordon;
import dev.cks.nodeops.nodes.CordonRecord;
import dev.cks.nodeops.nodes.NodeLock;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/** {@link NodeWork} on the API server. */
public final class KubernetesNodeWork implements NodeWork {
    /** Where the operations that lock nodes live (ScaleDown, NodeUpgrade: cluster-scoped). */
    private static final String GROUP = "nodeops.cks.dev";
    private static final String VERSION = "v1alpha1";
    private final KubernetesClient client;
    private final Supplier<List<Node>> allNodes;
    private final Function<String, Optional<Node>> oneNode;
    private final Cordon cordons;
    private final NodeLock locks;
    private final NodeDrainer drainer;
    private final DrainWatches drainWatches;
    private final DrainPreflight preflight;
    private volatile Consumer<String> wakeOwner = owner -> { };

    /**
     * @param allNodes how nodes are read: from the API, or from an informer's cache when the operation watches Nodes
     */
    public KubernetesNodeWork(KubernetesClient client, KubernetesClient drainClient, EvictionListener evictions, Supplier<List<Node>> allNodes,
            Function<String, Optional<Node>> oneNode, OwnPod own) {
        this.client = client;
        this.allNodes = allNodes;
        this.oneNode = oneNode;
        this.cordons = new Cordon(client);
        this.locks = new NodeLock(client);
        this.drainWatches = new DrainWatches(client);
        this.drainer = new NodeDrainer(drainClient, evictions, drainWatches, own);
        this.preflight = new DrainPreflight(drainClient);
    }

    /** Nodes read from the API server on every call; own: the operator's pod, drained last ({@link OwnPod}). */
    public static KubernetesNodeWork readingFromApi(KubernetesClient client, KubernetesClient drainClient, EvictionListener evictions, OwnPod own) {
        return new KubernetesNodeWork(client, drainClient, evictions, () -> ListPages.all(client.nodes()),
                name -> Optional.ofNullable(client.nodes().withName(name).get()), own);
    }

    @Override
    public List<Node> nodes() {
        return allNodes.get();
    }

    @Override
    public Optional<Node> node(String name) {
        return oneNode.apply(name);
    }

    @Override
    public NodeLock.Outcome lock(String node, String owner) {
        return locks.acquire(node, owner, this::ownerGone);
    }

    @Override
    public boolean ownerGone(String owner) {
        String[] parts = owner.split("/");
        if (parts.length != 3) {
            // Written by an older operator without the uid: whether it is the same operation cannot be told, so it is never taken.
            return false;
        }
        // A list by name: the operator lists and watches its CRs already, and needs no get on them.
        return client.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(GROUP).withVersion(VERSION)
                .withKind(parts[0]).withPlural(parts[0].toLowerCase(Locale.ROOT) + "s").withNamespaced(false).build())
                .withField("metadata.name", parts[1]).list().getItems().stream()
                .noneMatch(found -> parts[2].equals(found.getMetadata().getUid()));
    }

    @Override
    public Cordoning cordon(String node, String owner) {
        CordonRecord record;
        try {
            record = cordons.cordon(node, owner);
        } catch (KubernetesClientException e) {
            if (isLasting(e)) {
                return new NotCordoned("Node " + node + " could not be cordoned: " + e.getMessage());
            }
            throw e;
        }
        return record.unschedulable() ? new Cordoned(record)
                : new NotCordoned(record.note().isEmpty() ? "Node " + node + " could not be cordoned." : record.note());
    }

    /** Refusals that a retry would get again (forbidden, invalid); anything else may pass and is retried. */
    private static boolean isLasting(KubernetesClientException e) {
        int code = e.getCode();
        return code == 400 || code == 403 || code == 404 || code == 422;
    }

    @Override
    public DrainResult drain(String node, String owner, DrainOptions options, DrainState state, Instant deadline, Instant now) {
        return drainer.step(node, options, state, deadline, now, () -> wakeOwner.accept(owner));
    }

    @Override
    public void onDrainMoved(Consumer<String> wake) {
        this.wakeOwner = wake;
    }

    @Override
    public void stopDrainWatches() {
        drainWatches.close();
    }

    @Override
    public Map<EvictionApi.PodRef, EvictionApi.Answer> deletePods(List<DrainEscalation.Deletion> deletions) {
        return drainer.delete(deletions);
    }

    @Override
    public boolean release(String node, String owner, boolean uncordon) {
        // The drain ended with the node given back, whatever its last step said.
        drainWatches.stop(node);
        boolean uncordoned = uncordon && cordons.uncordon(node, owner);
        locks.release(node, owner);
        return uncordoned;
    }

    @Override
    public void delete(String node) {
        client.nodes().withName(node).delete();
    }

    @Override
    public PreflightPrediction.Report preflight(List<String> nodes, Draining draining, DrainOptions options, Instant now) {
        try {
            return preflight.check(nodes, draining, options, now);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted during the drain preflight");
        }
    }

    @Override
    public List<String> workloadsNotReady(List<String> workloads) {
        List<String> notReady = new java.util.ArrayList<>();
        for (String workload : workloads) {
            String[] kindAndRef = workload.split(" ", 2);
            String[] ref = kindAndRef[1].split("/", 2);
            Integer wanted;
            Integer ready;
            switch (kindAndRef[0]) {
                case "ReplicaSet" -> {
                    var replicaSet = client.apps().replicaSets().inNamespace(ref[0]).withName(ref[1]).get();
                    wanted = replicaSet == null ? null : replicaSet.getSpec().getReplicas();
                    ready = replicaSet == null || replicaSet.getStatus() == null ? null : replicaSet.getStatus().getReadyReplicas();
                }
                case "StatefulSet" -> {
                    var statefulSet = client.apps().statefulSets().inNamespace(ref[0]).withName(ref[1]).get();
                    wanted = statefulSet == null ? null : statefulSet.getSpec().getReplicas();
                    ready = statefulSet == null || statefulSet.getStatus() == null ? null : statefulSet.getStatus().getReadyReplicas();
                }
                default -> {
                    // Another controller: its pods, found by their controller reference, must all be Ready.
                    List<Pod> pods = client.pods().inNamespace(ref[0]).list().getItems().stream()
                            .filter(p -> p.getMetadata().getOwnerReferences() != null && p.getMetadata().getOwnerReferences().stream()
                                    .anyMatch(o -> Boolean.TRUE.equals(o.getController()) && o.getKind().equals(kindAndRef[0]) && o.getName().equals(ref[1])))
                            .filter(p -> p.getStatus() == null || !"Succeeded".equals(p.getStatus().getPhase())).toList();
                    wanted = pods.isEmpty() ? null : pods.size();
                    ready = (int) pods.stream().filter(p -> p.getStatus() != null && p.getStatus().getConditions() != null
                            && p.getStatus().getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))).count();
                }
            }
            int have = ready == null ? 0 : ready;
            if (wanted != null && have < wanted) {
                notReady.add(workload + " (" + have + " of " + wanted + " Ready)");
            }
        }
        return notReady;
    }

    @Override
    public Map<String, Integer> evictablePods(DrainOptions options, Instant now) {
        PodFilters filters = PodFilters.forOptions(options, now);
        Map<String, Integer> evictable = new LinkedHashMap<>();
        for (Pod pod : ListPages.all(client.pods().inAnyNamespace())) {
            String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
            if (node != null && pod.getMetadata().getDeletionTimestamp() == null && filters.verdict(pod).action() == PodVerdict.Action.EVICT) {
                evictable.merge(node, 1, Integer::sum);
            }
        }
        return evictable;
    }
}
