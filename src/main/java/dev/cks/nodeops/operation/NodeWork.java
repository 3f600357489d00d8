package dev.cks.nodeops.operation;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

import dev.cks.nodeops.drain.DrainEscalation;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.DrainResult;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.drain.Draining;
import dev.cks.nodeops.drain.EvictionApi;
import dev.cks.nodeops.drain.PreflightPrediction;
import dev.cks.nodeops.nodes.CordonRecord;
import dev.cks.nodeops.nodes.NodeLock;
import io.fabric8.kubernetes.api.model.Node;

/**
 * Everything a node operation reads of and does to nodes, behind one port: {@link KubernetesNodeWork}
 * on the API server, a fake in the reconcilers' unit tests. API errors that may pass (5xx, a dropped
 * connection) are thrown and the reconcile is retried; answers that will not change are typed results.
 */
public interface NodeWork {
    List<Node> nodes();

    Optional<Node> node(String name);

    /** Takes the node's lock for the owner ({@code <Kind>/<name>/<uid>}), reclaiming one whose owner is gone; idempotent. */
    NodeLock.Outcome lock(String node, String owner);

    /** Whether the operation a lock or cordon annotation names no longer exists (deleted, or re-created with another uid). */
    boolean ownerGone(String owner);

    /** Cordons the node for the owner, recording on the node that the owner did; idempotent. */
    Cordoning cordon(String node, String owner);

    /** The result of cordoning: the record of who cordoned it, or why it could not be cordoned. */
    sealed interface Cordoning {
    }

    record Cordoned(CordonRecord record) implements Cordoning {
    }

    record NotCordoned(String reason) implements Cordoning {
    }

    /**
     * One bounded drain step (see {@code NodeDrainer.step}) for the owner ({@code <Kind>/<name>/<uid>}), whom
     * the drain's watches wake (see {@link #onDrainMoved}) when it can move on before the step's next check.
     */
    DrainResult drain(String node, String owner, DrainOptions options, DrainState state, Instant deadline, Instant now);

    /** Whom drains wake: called, on a watch's thread, with the owner of a drain that can move on. */
    default void onDrainMoved(Consumer<String> wakeOwner) {
    }

    /** Stops the watches of every drain (the operator stops). */
    default void stopDrainWatches() {
    }

    /**
     * Gives the node back: uncordons it when asked and the node's own annotation says this owner
     * cordoned it (never a node cordoned before), then releases the owner's lock.
     *
     * @return true when this call uncordoned the node
     */
    boolean release(String node, String owner, boolean uncordon);

    /** Deletes the Node object ({@code kubectl delete node --ignore-not-found}). */
    void delete(String node);

    /** Dry-run evictions of what draining these nodes would evict, the budgets' status and where replacements could go; changes nothing. */
    PreflightPrediction.Report preflight(List<String> nodes, Draining draining, DrainOptions options, Instant now);

    /**
     * Of these workloads ({@code Kind namespace/name}, as a drain records them), those not back to all their
     * pods Ready, each described with its numbers; a workload that no longer exists counts as Ready.
     */
    List<String> workloadsNotReady(List<String> workloads);

    /** Per node, how many pods a drain with these options would evict. */
    Map<String, Integer> evictablePods(DrainOptions options, Instant now);

    /** Deletes pods by the escalation ladder (bypassing their budgets); what the API server answered per pod. */
    Map<EvictionApi.PodRef, EvictionApi.Answer> deletePods(List<DrainEscalation.Deletion> deletions);

    /**
     * One drain step of a node of an operation: its stored drain state is carried on and replaced, and the
     * pods the escalation ladder decided to delete are deleted, the answers recorded in that state.
     */
    default DrainTick drainTick(NodeProgress node, String owner, DrainOptions options, Instant deadline, Instant now) {
        DrainResult result = drain(node.getName(), owner, options, node.getDrain(), deadline, now);
        node.setDrain(result.state());
        DrainTick tick = DrainTick.of(node.getName(), result, options, now);
        if (tick.deletions().isEmpty()) {
            return tick;
        }
        return tick.withDeleted(DrainEscalation.recordDeletions(result.state(), deletePods(tick.deletions())));
    }
}
