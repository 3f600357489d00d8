package dev.cks.nodeops.drainability;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.PodSelection;
import dev.cks.nodeops.drain.PodSelector;
import dev.cks.nodeops.drainability.DrainReportStatus.Phase;
import dev.cks.nodeops.upgrade.NodeSelection;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * One pass of one DrainReport: read the cluster, judge every selected node, announce what changed, and compute
 * the status — in this one place. All I/O goes through the ports, so the whole pass runs in tests without a cluster.
 */
public final class DrainabilityPass {
    /** Reasons of the events a report records. */
    public static final String UNDRAINABLE_EVENT = "NodeUndrainable";
    public static final String DRAINABLE_EVENT = "NodeDrainable";
    public static final String READ_FAILED = "ReadFailed";

    /**
     * A Node's change wakes a report at once, but not twice within this: a hundred nodes joining in a minute
     * make a few passes, not a hundred. A spec change always runs at once.
     */
    static final Duration MIN_BETWEEN_PASSES = Duration.ofSeconds(10);

    /**
     * What the reconciler does with the resource afterwards; no delay means wait for a spec change.
     *
     * @param deferred nothing was done (a wake too soon after the last pass): the status is unchanged and need not be written
     */
    public record Outcome(DrainReportStatus status, Optional<Duration> rescheduleAfter, boolean deferred) {
        Outcome(DrainReportStatus status, Optional<Duration> rescheduleAfter) {
            this(status, rescheduleAfter, false);
        }
    }

    private final Clock clock;
    private final ClusterReader cluster;
    private final EventRecorder events;
    private final DrainabilityMetrics metrics;

    public DrainabilityPass(Clock clock, ClusterReader cluster, EventRecorder events, DrainabilityMetrics metrics) {
        this.clock = clock;
        this.cluster = cluster;
        this.events = events;
        this.metrics = metrics;
    }

    public Outcome run(DrainReport report) {
        DrainReportSpec spec = report.getSpec() == null ? new DrainReportSpec() : report.getSpec();
        DrainReportStatus status = report.getStatus() == null ? new DrainReportStatus() : report.getStatus();
        String name = report.getMetadata().getName();
        Long generation = report.getMetadata().getGeneration();
        Instant startedAt = clock.instant();
        Optional<Duration> tooSoon = tooSoon(status, generation, startedAt);
        if (tooSoon.isPresent()) {
            return new Outcome(status, tooSoon, true);
        }
        DrainAssumptions assumptions = spec.getDrain() == null ? new DrainAssumptions() : spec.getDrain();
        Optional<String> nodeDeprecation = NodeSelection.deprecation(spec.getNodeSelector(), "DrainReport " + name);
        Optional<String> podDeprecation = PodSelection.deprecation(assumptions.getPodSelector(), "DrainReport " + name, false);
        // Once per spec, not every pass: the Accepted condition keeps saying it meanwhile.
        if (!Objects.equals(status.getObservedGeneration(), generation)) {
            nodeDeprecation.ifPresent(message -> events.warning(report, NodeSelection.DEPRECATED_NODE_SELECTOR, message));
            podDeprecation.ifPresent(message -> events.warning(report, PodSelection.DEPRECATED_POD_SELECTOR, message));
        }
        String validReason = nodeDeprecation.isPresent() ? NodeSelection.DEPRECATED_NODE_SELECTOR
                : podDeprecation.isPresent() ? PodSelection.DEPRECATED_POD_SELECTOR : "Valid";
        String valid = nodeDeprecation.isEmpty() && podDeprecation.isEmpty() ? "the spec is valid"
                : Stream.of(nodeDeprecation, podDeprecation).flatMap(Optional::stream).collect(Collectors.joining(" "));
        status.setObservedGeneration(generation);
        Duration interval = Duration.ofSeconds(spec.getIntervalSeconds() == null ? 300 : spec.getIntervalSeconds());

        if (Boolean.TRUE.equals(spec.getSuspend())) {
            metrics.forget(name);
            String message = "Reporting is suspended; set spec.suspend to false to resume it.";
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, validReason, valid, generation, startedAt);
            Conditions.setUnknown(status.getConditions(), Conditions.DRAINABLE, "Suspended", message, generation, startedAt);
            status.setPhase(Phase.Suspended);
            status.setMessage(message);
            return new Outcome(status, Optional.empty());
        }
        ClusterReader.Read read;
        List<Drainability.Verdict> verdicts;
        try {
            read = cluster.read();
            verdicts = Drainability.assess(read.reading(), spec.nodeSelection(), assumptions.toDrainOptions(), startedAt);
        } catch (PodSelector.InvalidSelector invalid) {
            metrics.forget(name);
            String message = "spec.drain.podSelector cannot be parsed: " + invalid.getMessage() + ". Fix it; nothing is reported until then.";
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "InvalidPodSelector", message, generation, startedAt);
            status.setPhase(Phase.Error);
            status.setMessage(message);
            return new Outcome(status, Optional.empty());
        } catch (KubernetesClientException unreadable) {
            // The last verdicts stay, as they were: a failed read says nothing about the nodes.
            String message = "The cluster could not be read (HTTP " + unreadable.getCode() + ": " + unreadable.getMessage()
                    + "); the nodes below are from the last pass, and the next pass tries again in " + interval.toSeconds() + " s.";
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, validReason, valid, generation, startedAt);
            Conditions.setUnknown(status.getConditions(), Conditions.DRAINABLE, READ_FAILED, message, generation, startedAt);
            status.setPhase(Phase.Error);
            status.setMessage(message);
            return new Outcome(status, Optional.of(interval));
        }
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, validReason, valid, generation, startedAt);
        BlockedNodes.Plan plan = BlockedNodes.plan(verdicts, status.getBlockedNodes(), status.getReportedBlocked(), startedAt);
        announce(report, plan, spec.getMaxEventsPerRun() == null ? 5 : spec.getMaxEventsPerRun());
        metrics.publish(name, verdicts);

        status.setNodeCount(verdicts.size());
        status.setDrainableCount(plan.drainableCount());
        status.setBlockedCount(plan.blockedCount());
        status.setBlockedNodes(plan.listed());
        status.setReportedBlocked(plan.reportedBlocked());
        String summary = summary(plan);
        status.setMessage(summary);
        status.setPhase(plan.blockedCount() == 0 ? Phase.Drainable : Phase.Blocked);
        Conditions.set(status.getConditions(), Conditions.DRAINABLE, plan.blockedCount() == 0,
                plan.blockedCount() == 0 ? "AllDrainable" : "NodesBlocked", summary, generation, startedAt);
        DrainReportStatus.LastRun lastRun = new DrainReportStatus.LastRun();
        lastRun.setStartedAt(Timestamps.format(startedAt));
        lastRun.setDurationMillis(Math.max(0, Duration.between(startedAt, clock.instant()).toMillis()));
        lastRun.setApiRequests(read.apiRequests());
        lastRun.setPods(read.reading().pods().size());
        status.setLastRun(lastRun);
        return new Outcome(status, Optional.of(interval));
    }

    /** How long to wait when the last pass of the same spec started less than {@link #MIN_BETWEEN_PASSES} ago. */
    private static Optional<Duration> tooSoon(DrainReportStatus status, Long generation, Instant now) {
        if (status.getLastRun() == null || status.getLastRun().getStartedAt() == null || !Objects.equals(status.getObservedGeneration(), generation)) {
            return Optional.empty();
        }
        Instant notBefore = Timestamps.parse(status.getLastRun().getStartedAt()).plus(MIN_BETWEEN_PASSES);
        return notBefore.isAfter(now) ? Optional.of(Duration.between(now, notBefore)) : Optional.empty();
    }

    private void announce(DrainReport report, BlockedNodes.Plan plan, int maxEvents) {
        int budget = maxEvents;
        int blockedLeft = plan.newlyBlocked().size();
        for (Drainability.Verdict verdict : plan.newlyBlocked()) {
            if (budget == 0) {
                break;
            }
            events.warning(report, UNDRAINABLE_EVENT, "Node " + verdict.node() + " could not be drained now: "
                    + String.join("; ", verdict.reasons().subList(0, Math.min(3, verdict.reasons().size())))
                    + (verdict.reasons().size() > 3 ? "; and " + (verdict.reasons().size() - 3) + " more" : "") + ".");
            budget--;
            blockedLeft--;
        }
        int drainableLeft = plan.drainableAgain().size();
        for (String node : plan.drainableAgain()) {
            if (budget == 0) {
                break;
            }
            events.normal(report, DRAINABLE_EVENT, "Node " + node + " could be drained again: nothing blocks its drain now.");
            budget--;
            drainableLeft--;
        }
        if (blockedLeft > 0 || drainableLeft > 0) {
            events.warning(report, UNDRAINABLE_EVENT, blockedLeft + " more nodes became undrainable and " + drainableLeft
                    + " more drainable again; status.blockedNodes of DrainReport " + report.getMetadata().getName() + " lists the blocked ones.");
        }
    }

    private static String summary(BlockedNodes.Plan plan) {
        int nodes = plan.blockedCount() + plan.drainableCount();
        if (plan.blockedCount() == 0) {
            return "All " + nodes + " nodes could be drained now.";
        }
        String shown = plan.blockedCount() > plan.listed().size() ? " (status lists the " + plan.listed().size() + " blocked longest)" : "";
        return plan.blockedCount() + " of " + nodes + " nodes could not be drained now" + shown + ": "
                + String.join(", ", plan.listed().stream().limit(5).map(BlockedNode::getName).toList())
                + (plan.blockedCount() > 5 ? ", …" : "") + ".";
    }
}
