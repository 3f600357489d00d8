package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.upgrade.IsoCanaryHandover.DetachFirst;
import dev.cks.nodeops.upgrade.IsoCanaryHandover.Finish;
import dev.cks.nodeops.upgrade.IsoCanaryHandover.MoveTo;
import dev.cks.nodeops.upgrade.IsoCanaryHandover.Wait;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

/** What a node about to be cordoned does about an ISO canary that runs on another node. Pure: no cluster, no CloudStack. */
class IsoCanaryHandoverTest {
    private static final String CANARY_NODE = "prod-node-b1";
    private static final String ASKING = "prod-node-b2";

    private static UpgradeNodeStatus entry(String name, Phase phase, String skipReason) {
        UpgradeNodeStatus node = UpgradeProgressTest.entry(name, phase);
        node.setSkipReason(skipReason);
        return node;
    }

    private static IsoCanaryStatus canary(IsoState state) {
        IsoCanaryStatus canary = new IsoCanaryStatus(CANARY_NODE, "v1.35.4");
        canary.setIsoState(state);
        return canary;
    }

    private static List<UpgradeNodeStatus> nodes(Phase canaryNode) {
        return List.of(entry(CANARY_NODE, canaryNode, canaryNode == Phase.Skipped ? "its Node object was deleted after the upgrade was planned" : null),
                entry(ASKING, Phase.Pending, null));
    }

    @Test
    void aCanaryWhoseNodeIsStillToBeUpgradedIsWaitedFor() {
        assertThat(IsoCanaryHandover.decide(canary(IsoState.Attached), ASKING, nodes(Phase.Pending))).isEqualTo(new Wait(CANARY_NODE));
    }

    @Test
    void aSkippedNodesCanaryWithItsIsoOnTheVmIsDetachedFirstNamingWhy() {
        for (IsoState state : List.of(IsoState.Attached, IsoState.Detaching)) {
            assertThat(IsoCanaryHandover.decide(canary(state), ASKING, nodes(Phase.Skipped))).as(state.name())
                    .isEqualTo(new DetachFirst("it is not upgraded: its Node object was deleted after the upgrade was planned"));
        }
    }

    @Test
    void anAttachSentButNotSeenEndedIsSettledBeforeTheCanaryMoves() {
        IsoCanaryStatus sent = canary(IsoState.Attaching);
        sent.setIsoRequestedAt("2026-11-30T12:00:00Z");
        assertThat(IsoCanaryHandover.decide(sent, ASKING, nodes(Phase.Skipped))).isInstanceOf(DetachFirst.class);
        sent.setIsoRequestedAt(null);
        sent.setIsoJobId("job-1");
        assertThat(IsoCanaryHandover.decide(sent, ASKING, nodes(Phase.Skipped))).isInstanceOf(DetachFirst.class);
    }

    @Test
    void withNoIsoOfTheCanarysOnTheVmTheCanaryMovesToTheAskingNode() {
        // Never attached, detached, or an attach chosen but never sent: nothing on the VM, nothing on its way.
        for (IsoState state : java.util.Arrays.asList(null, IsoState.Detached, IsoState.Attaching)) {
            assertThat(IsoCanaryHandover.decide(canary(state), ASKING, nodes(Phase.Skipped))).as(String.valueOf(state))
                    .isEqualTo(new MoveTo(ASKING, "it is not upgraded: its Node object was deleted after the upgrade was planned"));
        }
    }

    @Test
    void aNodeNoLongerPlannedGivesItsCanaryUp() {
        // A retry plans again from the nodes there are: the canary's node, deleted meanwhile, is not among them.
        List<UpgradeNodeStatus> replanned = List.of(entry(ASKING, Phase.Pending, null));
        assertThat(IsoCanaryHandover.decide(canary(IsoState.Attached), ASKING, replanned))
                .isEqualTo(new DetachFirst("it is no longer among the nodes to upgrade"));
        assertThat(IsoCanaryHandover.decide(canary(IsoState.Detached), ASKING, replanned))
                .isEqualTo(new MoveTo(ASKING, "it is no longer among the nodes to upgrade"));
    }

    @Test
    void aVerdictReadBeforeTheNodeWasGivenUpStandsForTheIso() {
        IsoCanaryStatus judged = canary(IsoState.Detaching);
        judged.setVerdict(IsoCanaryStatus.Verdict.Failed);
        assertThat(IsoCanaryHandover.decide(judged, ASKING, nodes(Phase.Failed))).isEqualTo(new Finish("it is Failed"));
    }
}
