package dev.cks.nodeops.upgrade;

import java.util.List;
import java.util.Optional;

import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

/**
 * What another node does about an ISO canary that runs on a node of its own (docs/iso-canary.md, "The canary's node
 * given up"). Pure: a function of the canary's record and the status' nodes. One canary per NodeUpgrade and target, so
 * the other nodes wait for its verdict; but a canary whose node is no longer to be upgraded (its Node deleted, it opted
 * out or left the selector, so its turn skipped it; or a retry planned without it) would keep them waiting for a
 * verdict nobody is getting. Its ISO comes off that node's VM first (an attach still under way ends first, a lost
 * answer is looked up), then the canary starts again on the node that asks.
 */
final class IsoCanaryHandover {
    sealed interface Decision {
    }

    /** The canary's node is still to be upgraded: the asking node waits for its verdict. */
    record Wait(String canaryNode) implements Decision {
    }

    /** The verdict is in status already: it judges the ISO, not the node, so the canary ends from here (its detach, its record). */
    record Finish(String why) implements Decision {
    }

    /** The canary's node is given up while its ISO may be on the node's VM: detach it (after an attach under way) first. */
    record DetachFirst(String why) implements Decision {
    }

    /** The canary's node is given up and no ISO of the canary's is on its VM: the canary starts again on {@code node}. */
    record MoveTo(String node, String why) implements Decision {
    }

    private IsoCanaryHandover() {
    }

    /**
     * @param canary a canary not over, running on another node than {@code asking}
     * @param asking a Pending node about to be locked and cordoned
     * @param nodes the status' nodes, as this reconcile left them
     */
    static Decision decide(IsoCanaryStatus canary, String asking, List<UpgradeNodeStatus> nodes) {
        Optional<UpgradeNodeStatus> entry = nodes.stream().filter(n -> n.getName().equals(canary.getNode())).findFirst();
        if (entry.isPresent() && entry.get().getPhase() == Phase.Pending) {
            return new Wait(canary.getNode());
        }
        String why = entry.isEmpty() ? "it is no longer among the nodes to upgrade"
                : entry.get().getPhase() == Phase.Skipped && entry.get().getSkipReason() != null ? "it is not upgraded: " + entry.get().getSkipReason()
                : "it is " + entry.get().getPhase();
        if (canary.getVerdict() != null) {
            return new Finish(why);
        }
        return isoOff(canary) ? new MoveTo(asking, why) : new DetachFirst(why);
    }

    /** No ISO of the canary's is on the VM, nor can one arrive: none attached, detached, or an attach chosen but never sent. */
    static boolean isoOff(IsoRecord canary) {
        IsoState state = canary.getIsoState();
        return state == null || state == IsoState.Detached
                || state == IsoState.Attaching && canary.getIsoRequestedAt() == null && canary.getIsoJobId() == null;
    }
}
