package dev.cks.nodeops.nodes;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import org.jboss.logging.Logger;

import dev.cks.nodeops.common.ListPages;
import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSystemInfoBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * The operator's one cache of the cluster's Nodes: one informer, whose events wake NodeUpgrades and DrainReports
 * (through their {@link NodeWakeups}) and whose cache the VMMapAudit reads. One informer instead of one per controller means
 * one first list of every Node at start-up, one watch and one copy: beside 1,000 Nodes the operator's RSS
 * fell by about 20 MiB, and its start-up lost one list of them (docs/benchmarks.md, "Start-up beside 1,000
 * Nodes").
 * <p>
 * It starts listing when the application starts, before the controllers do: the first list of every Node
 * is the longest wait of the operator's start-up (4.6 MB of JSON at 1,000 Nodes), and JOSDK would start it
 * only after the NodeUpgrade controller's own informer has synced. Started here, it runs while Quarkus
 * registers and starts the controllers (docs/benchmarks.md, "The Node list started first").
 */
@Singleton
public class NodeCache {
    private static final Logger LOG = Logger.getLogger(NodeCache.class);
    private final SharedIndexInformer<Node> informer;
    private final CompletableFuture<Void> synced = new CompletableFuture<>();

    @Inject
    public NodeCache(KubernetesClient client) {
        informer = client.nodes().withLimit(ListPages.PAGE).runnableInformer(0); // a thousand nodes do not arrive in one answer
        informer.itemStore(new TransformingItemStore<>(NodeCache::pruned));
        // The API server may be away (a control-plane node being upgraded, an operator started before it is
        // back): keep trying, as the controllers' informers do (stop-on-informer-error-during-startup=false).
        informer.exceptionHandler((started, error) -> {
            LOG.debugf("watch of nodes: %s; retrying", error.getMessage());
            return !ExceptionHandler.isDeserializationException(error);
        });
    }

    /** Before the operator starts its controllers (JOSDK's start observes the same event later). */
    void start(@Observes @Priority(Interceptor.Priority.LIBRARY_BEFORE) StartupEvent event) {
        informer.start().whenComplete((done, error) -> {
            if (error == null) {
                synced.complete(null);
            } else {
                synced.completeExceptionally(error);
            }
        });
    }

    void stop(@Observes ShutdownEvent event) {
        informer.stop();
    }

    /**
     * Waits until the first list is in the cache, as a JOSDK informer's start does, at most {@code timeout}
     * (JOSDK's cache sync time-out). If the Nodes cannot be listed by then the controller starts anyway and
     * the informer keeps trying, as the controllers' own informers do; {@link #watching} says whether it did.
     */
    public void awaitSynced(Duration timeout) {
        try {
            synced.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.warnf("the Node cache is not filled after %s (%s); it keeps trying", timeout, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the Node cache", e);
        }
    }

    /** The handler is told of every Node already cached as added, then of each change (with the older Node as cached: pruned). */
    public void subscribe(ResourceEventHandler<Node> handler) {
        informer.addEventHandler(handler);
    }

    public void unsubscribe(ResourceEventHandler<Node> handler) {
        informer.removeEventHandler(handler);
    }

    /** Listed and still watching (not merely synced once): only then is the cache current. */
    public boolean watching() {
        return informer.isRunning() && informer.hasSynced() && informer.isWatching();
    }

    public Stream<Node> all() {
        return informer.getStore().list().stream();
    }

    public Optional<Node> get(String name) {
        return Optional.ofNullable(informer.getStore().getByKey(name));
    }

    /**
     * What the cache keeps of a Node: what its readers read, so a thousand cached Nodes stay small. The
     * upgrades' wake-ups and availability count read readiness, kubelet version, cordon, who cordoned it and
     * who holds its lock; a Continuous NodeUpgrade's wake-ups read its labels (its selector) and its opt-out; the
     * audit reads name, age and kubelet version; the informer needs the resourceVersion.
     */
    public static Node pruned(Node node) {
        NodeBuilder pruned = new NodeBuilder().withNewMetadata().withName(node.getMetadata().getName())
                .withCreationTimestamp(node.getMetadata().getCreationTimestamp())
                .withResourceVersion(node.getMetadata().getResourceVersion()).withLabels(node.getMetadata().getLabels()).endMetadata();
        NodeAnnotations.excluded(node).ifPresent(why -> pruned.editMetadata()
                .addToAnnotations(NodeAnnotations.EXCLUDE, node.getMetadata().getAnnotations().get(NodeAnnotations.EXCLUDE)).endMetadata());
        NodeLock.holder(node).ifPresent(holder -> pruned.editMetadata().addToAnnotations(NodeAnnotations.LOCK, holder).endMetadata());
        String cordonedBy = node.getMetadata().getAnnotations() == null ? null : node.getMetadata().getAnnotations().get(NodeAnnotations.CORDONED_BY);
        if (cordonedBy != null) {
            pruned.editMetadata().addToAnnotations(NodeAnnotations.CORDONED_BY, cordonedBy).endMetadata();
        }
        if (NodeReadiness.isUnschedulable(node)) {
            pruned.withNewSpec().withUnschedulable(true).endSpec();
        }
        if (node.getStatus() != null) {
            pruned.withNewStatus().withNodeInfo(node.getStatus().getNodeInfo() == null ? null
                    : new NodeSystemInfoBuilder().withKubeletVersion(node.getStatus().getNodeInfo().getKubeletVersion()).build())
                    .withConditions(node.getStatus().getConditions() == null ? List.of()
                            : node.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).toList())
                    .endStatus();
        }
        return pruned.build();
    }
}
