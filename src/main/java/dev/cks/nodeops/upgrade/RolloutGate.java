package dev.cks.nodeops.upgrade;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Node;

/**
 * The rollout's gate: which node may start now and what each node in progress may do in this reconcile.
 * Pure - the reconciler passes the instant it read from its Clock and the Nodes it read - so every rule
 * is tested without a cluster. It puts together spec.paused and spec.window ({@link WorkGate}), the
 * deadline, "no further node starts after one failed", and maxUnavailable with the control-plane-first
 * order ({@link UpgradeRollout}, where a soaking node keeps its place until its soak is over).
 */
final class RolloutGate {
    /** spec.paused and spec.window, for a node not yet begun and for one in progress. */
    record Windows(WorkGate.Verdict newWork, WorkGate.Verdict goOn) {
        /**
         * Work goes on in this reconcile (a node in progress, or a new one may start): the time held so far
         * is given back to the deadline and the drains before the deadline is looked at.
         */
        boolean resume(List<UpgradeNodeStatus> nodes) {
            return goOn instanceof WorkGate.Go && (newWork instanceof WorkGate.Go || nodes.stream().anyMatch(UpgradeRollout::inProgress));
        }
    }

    /** What a node does in this reconcile. */
    sealed interface Turn {
        UpgradeNodeStatus node();
    }

    /** Its next step. */
    record Advance(UpgradeNodeStatus node) implements Turn {
    }

    /** It fails: the deadline passed before it reached its upgrade Job. */
    record GiveUp(UpgradeNodeStatus node, String error) implements Turn {
    }

    /** What the upgrade does when no node has a turn. */
    sealed interface Idle {
    }

    /** Nothing is in progress and a node failed: the upgrade fails. */
    record FinishFailed(List<UpgradeNodeStatus> failed) implements Idle {
    }

    /** Nothing is in progress and nothing is left to start: the upgrade succeeds. */
    record FinishSucceeded() implements Idle {
    }

    /** Nothing is in progress and the deadline passed before the next node could start: that node fails. */
    record StartTooLate(UpgradeNodeStatus node, String error) implements Idle {
    }

    /** Paused or outside the window: nothing moves until the hold ends. */
    record Held(WorkGate.Hold hold) implements Idle {
    }

    /** maxUnavailable (or control-plane-first) leaves no room for the next node: {@code limit} says why. */
    record NoRoom(String limit) implements Idle {
    }

    /** The turns of this reconcile, in order (nodes in progress, then those that start); {@code idle} applies when there are none. */
    record Round(List<Turn> turns, Idle idle) {
    }

    private RolloutGate() {
    }

    static Windows windows(NodeUpgradeSpec spec, Instant now) {
        return new Windows(WorkGate.check(spec.getPaused(), spec.getWindow(), WorkGate.Work.NEW, now),
                WorkGate.check(spec.getPaused(), spec.getWindow(), WorkGate.Work.IN_PROGRESS, now));
    }

    /**
     * @param status after {@link Windows#resume} was applied, so its deadline counts no time held
     * @param nodes the planned Nodes as read now (others are not looked at; a missing one counts as unavailable)
     * @param owner this upgrade's lock owner
     */
    static Round round(NodeUpgradeSpec spec, NodeUpgradeStatus status, Windows windows, List<Node> nodes, String owner, Instant now) {
        Instant deadline = status.deadlineAt(now);
        boolean overdue = deadline != null && !now.isBefore(deadline);
        boolean anyFailed = status.getNodes().stream().anyMatch(n -> n.getPhase() == Phase.Failed);
        UpgradeRollout.Selection selection = UpgradeRollout.select(status.getNodes(), nodes, spec.getMaxUnavailable(), owner,
                windows.newWork() instanceof WorkGate.Go && !anyFailed && !overdue);
        List<Turn> turns = new ArrayList<>();
        for (UpgradeNodeStatus node : selection.inProgress()) {
            // No new work past the deadline; a node whose upgrade runs (or that is restarting) finishes first,
            // bounded by its Job's activeDeadlineSeconds and readyTimeoutSeconds: it is never given back under kubeadm.
            // One whose upgrade never started (nothing asked of it or of CloudStack) is given back like a drained one.
            if (overdue && node.getPhase() != Phase.Failed && (!UpgradeProgress.isUnderway(node) || UpgradeProgress.nothingStarted(node))) {
                turns.add(new GiveUp(node, "The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline() + ") passed while node "
                        + node.getName() + " was " + node.getPhase() + "."));
            } else if (!(windows.goOn() instanceof WorkGate.Hold && atSafeBoundary(node))) {
                turns.add(new Advance(node));
            }
        }
        selection.toStart().forEach(node -> turns.add(new Advance(node)));
        return new Round(turns, idle(status, selection, windows, overdue));
    }

    private static Idle idle(NodeUpgradeStatus status, UpgradeRollout.Selection selection, Windows windows, boolean overdue) {
        List<UpgradeNodeStatus> failed = status.getNodes().stream().filter(n -> n.getPhase() == Phase.Failed).toList();
        Optional<UpgradeNodeStatus> pending = status.getNodes().stream().filter(n -> n.getPhase() == Phase.Pending).findFirst();
        if (selection.inProgress().isEmpty()) {
            if (!failed.isEmpty()) {
                return new FinishFailed(failed);
            }
            if (pending.isEmpty()) {
                return new FinishSucceeded();
            }
            if (overdue) {
                return new StartTooLate(pending.get(), "The NodeUpgrade's deadline (spec.timeoutSeconds, " + status.getDeadline()
                        + ") passed before node " + pending.get().getName() + " could start.");
            }
        }
        // A node in progress is held by the rule for work in progress; otherwise only new work waits.
        WorkGate.Verdict gate = selection.inProgress().isEmpty() ? windows.newWork() : windows.goOn();
        return gate instanceof WorkGate.Hold hold ? new Held(hold) : new NoRoom(selection.limit());
    }

    /** Where a node may stay while the upgrade is paused or its window closed: before or during its drain, before its Job, soaking. */
    static boolean atSafeBoundary(UpgradeNodeStatus node) {
        return switch (node.getPhase()) {
            case Cordoned, Draining, Soaking -> true;
            case Upgrading -> UpgradeProgress.nothingStarted(node);
            default -> false;
        };
    }
}
