package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.MaintenanceWindow;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testing.TestWindows;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

/**
 * The estimated finish of a NodeUpgrade on the bed (docs/eta.md): six KWOK workers of one group, no control-plane node
 * selected, no pods on them; the packaged operator with its default priors, {@link dev.cks.nodeops.testbed.KubeletUpgradeSimulation}
 * playing the kubelets (a node comes back at the target when its Job succeeds), the Script executor (no CloudStack).
 */
class NodeUpgradeEstimateIT extends NodeUpgradeScenario {
    private static final String SCRIPT_CONFIGMAP = "nu-eta-kubeadm-upgrade";
    private static final String SCRIPT = "#!/bin/sh\nset -eu\nkubeadm upgrade node\n";
    private static final DateTimeFormatter HH_MM = DateTimeFormatter.ofPattern("HH:mm");

    NodeUpgradeEstimateIT() {
        super("nueta");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return trustedScript(shared, SCRIPT_CONFIGMAP, SCRIPT);
    }

    private List<String> sixWorkers() {
        List<String> workers = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            workers.add(bed.worker(FROM));
        }
        return workers;
    }

    private static long succeeded(NodeUpgrade upgrade) {
        return upgrade.getStatus().getNodes().stream().filter(n -> n.getPhase() == Phase.Succeeded).count();
    }

    /**
     * One worker at a time, each soaking 5 s: once the second is done, the estimate rests on the two measured here (not the
     * priors of minutes) and is within half of the time the four others then actually take. `kubectl get` shows it as ETA.
     */
    @Test
    void afterTheSecondOfSixNodesTheEstimatedFinishIsWithinHalfOfTheActualFinish() {
        sixWorkers();
        AtomicReference<NodeUpgrade> afterTwo = new AtomicReference<>();
        bed.create("nu-eta", UpgradeBed.script(SCRIPT_CONFIGMAP, "upgrade.sh"), spec -> spec.setSoakSeconds(5));

        NodeUpgrade running = bed.await("nu-eta", Duration.ofSeconds(60), u -> u.getStatus().getEstimatedFinish() != null);
        assertThat(running.getStatus().getEstimateBasis()).as("before any node finished: the priors").contains("6 left; worker", "prior");
        assertThat(testBed.tool("kubectl", "get", "nu", "nu-eta")).contains("ETA");
        bed.await("nu-eta", Duration.ofSeconds(180), u -> {
            if (succeeded(u) == 2) {
                afterTwo.compareAndSet(null, u);
            }
            return succeeded(u) >= 2;
        });
        NodeUpgrade done = bed.await("nu-eta", Duration.ofSeconds(300), phase(NodeUpgradeStatus.Phase.Succeeded));

        NodeUpgrade two = afterTwo.get();
        assertThat(two).as("the status seen right after the second node").isNotNull();
        assertThat(two.getStatus().getEstimateBasis()).contains("4 left; worker", "measured: the mean of 2 finished here");
        Instant secondDone = two.getStatus().getNodes().stream().filter(n -> n.getPhase() == Phase.Succeeded)
                .map(n -> Instant.parse(n.getCompletedAt())).max(Instant::compareTo).orElseThrow();
        Instant estimated = Instant.parse(two.getStatus().getEstimatedFinish());
        Instant actual = Instant.parse(done.getStatus().getCompletedAt());
        Duration left = Duration.between(secondDone, actual);
        System.out.printf("NodeUpgradeEstimateIT: after the second node (%s) the estimate was %s, the actual finish %s: off by %s of %s left%n",
                secondDone, estimated, actual, Duration.between(estimated, actual).abs(), left);
        assertThat(Duration.between(estimated, actual).abs()).as("estimate %s, actual finish %s, %s after the second node", estimated, actual, left)
                .isLessThanOrEqualTo(left.dividedBy(2));
        assertThat(done.getStatus().getEstimatedFinish()).as("an upgrade that ended has no estimate").isNull();
    }

    /**
     * A window of ten minutes opening in an hour, for six workers of the prior's 6 minutes one at a time: with preflight Fail it is
     * refused at once, the estimate and the window in the message, and no node is locked or cordoned.
     */
    @Test
    void aWindowTooShortForThePlanIsRefusedBeforeAnyCordonWithTheEstimateInTheMessage() {
        List<String> workers = sixWorkers();
        ZonedDateTime opens = ZonedDateTime.now(ZoneOffset.UTC).plusHours(1).truncatedTo(ChronoUnit.MINUTES);
        MaintenanceWindow window = TestWindows.window("UTC", opens.format(HH_MM), opens.plusMinutes(10).format(HH_MM), MaintenanceWindow.Day.values());

        bed.create("nu-eta-window", UpgradeBed.script(SCRIPT_CONFIGMAP, "upgrade.sh"), spec -> {
            spec.setWindow(window);
            spec.setPreflight(Preflight.Fail);
        });
        NodeUpgrade refused = bed.await("nu-eta-window", Duration.ofSeconds(60), phase(NodeUpgradeStatus.Phase.Failed));

        var accepted = Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED).orElseThrow();
        assertThat(accepted.getStatus()).isEqualTo("False");
        assertThat(accepted.getReason()).isEqualTo(OperationRecorder.REFUSED);
        assertThat(accepted.getMessage()).contains("NodeUpgrade nu-eta-window is estimated to finish at ", "6 left; worker 6 min a node, prior",
                "after the end of the next window, from " + opens.format(DateTimeFormatter.ofPattern("EEE yyyy-MM-dd HH:mm")) + " UTC",
                "Nothing was cordoned", "spec.preflight: Warn");
        workers.forEach(w -> bed.assertReleased(w, false));
        assertThat(bed.events("nu-eta-window")).as("no node was cordoned").noneMatch(e -> OperationRecorder.CORDONED.equals(e.getReason()));
    }
}
