package dev.cks.nodeops.monitoring;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cks.nodeops.audit.AuditSettings;
import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VmMapFinding;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainState;
import dev.cks.nodeops.operation.DrainTick;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus;

/**
 * Pure: the series that describe the CRs' status, computed from the status alone. Because the status
 * is the operation's record, every replica exports the same values, a leader failover changes nothing,
 * and a deleted CR's series go with it.
 */
public final class StatusSeries {
    public static final String OPERATION_PHASE = "cks.operation.phase";
    public static final String DRAIN_BLOCKED = "cks.drain.blocked";
    public static final String FINDINGS = "cks.vmmap.findings";
    public static final String LAST_COMPLETE_RUN = "cks.vmmap.audit.last.complete.run.timestamp";
    public static final String AUDIT_INTERVAL = "cks.vmmap.audit.interval";
    public static final String NODES_BELOW_TARGET = "cks.nodeupgrade.nodes.below.target";
    public static final String ESTIMATED_FINISH = "cks.operation.estimated.finish.timestamp";

    /** One series: its labels and value. */
    public record Sample(Map<String, String> labels, double value) {
    }

    private StatusSeries() {
    }

    /** 1 for the phase each operation is in. */
    public static List<Sample> operationPhases(List<NodeUpgrade> upgrades, List<ScaleDown> scaleDowns) {
        List<Sample> samples = new ArrayList<>();
        upgrades.stream().filter(u -> u.getStatus() != null && u.getStatus().getPhase() != null).forEach(u -> samples.add(
                new Sample(Map.of("kind", "NodeUpgrade", "name", u.getMetadata().getName(), "phase", u.getStatus().getPhase().name()), 1)));
        scaleDowns.stream().filter(s -> s.getStatus() != null && s.getStatus().getPhase() != null).forEach(s -> samples.add(
                new Sample(Map.of("kind", "ScaleDown", "name", s.getMetadata().getName(), "phase", s.getStatus().getPhase().name()), 1)));
        return samples;
    }

    /** When each running operation is estimated to be done (status.estimatedFinish), epoch seconds; none once it is over. */
    public static List<Sample> estimatedFinishes(List<NodeUpgrade> upgrades, List<ScaleDown> scaleDowns) {
        List<Sample> samples = new ArrayList<>();
        upgrades.stream().filter(u -> u.getStatus() != null && u.getStatus().getEstimatedFinish() != null).forEach(u -> samples.add(
                new Sample(Map.of("kind", "NodeUpgrade", "name", u.getMetadata().getName()), epochSeconds(u.getStatus().getEstimatedFinish()))));
        scaleDowns.stream().filter(s -> s.getStatus() != null && s.getStatus().getEstimatedFinish() != null).forEach(s -> samples.add(
                new Sample(Map.of("kind", "ScaleDown", "name", s.getMetadata().getName()), epochSeconds(s.getStatus().getEstimatedFinish()))));
        return samples;
    }

    private static double epochSeconds(String timestamp) {
        return Timestamps.parse(timestamp).getEpochSecond();
    }

    /** For each Continuous NodeUpgrade that has held once: its selected nodes older than its target at its last look (status.hold.belowTarget). */
    public static List<Sample> nodesBelowTarget(List<NodeUpgrade> upgrades) {
        return upgrades.stream().filter(u -> u.getStatus() != null && u.getStatus().getHold() != null)
                .map(u -> new Sample(Map.of("name", u.getMetadata().getName()), u.getStatus().getHold().getBelowTarget())).toList();
    }

    /** For every node being drained: 1 while it is blocked by the kit's one rule ({@link DrainTick#blockedFor}), else 0. */
    public static List<Sample> drainsBlocked(List<NodeUpgrade> upgrades, List<ScaleDown> scaleDowns, Instant now) {
        List<Sample> samples = new ArrayList<>();
        for (NodeUpgrade upgrade : upgrades) {
            if (upgrade.getStatus() != null) {
                upgrade.getStatus().getNodes().stream().filter(n -> n.getPhase() == UpgradeNodeStatus.Phase.Draining)
                        .forEach(n -> samples.add(blocked("NodeUpgrade", upgrade.getMetadata().getName(), n.getName(), n.getDrain(), now)));
            }
        }
        for (ScaleDown scaleDown : scaleDowns) {
            if (scaleDown.getStatus() != null) {
                scaleDown.getStatus().getNodes().stream().filter(n -> n.getPhase() == ScaleDownNodeStatus.Phase.Draining)
                        .forEach(n -> samples.add(blocked("ScaleDown", scaleDown.getMetadata().getName(), n.getName(), n.getDrain(), now)));
            }
        }
        return samples;
    }

    private static Sample blocked(String kind, String name, String node, DrainState drain, Instant now) {
        boolean blocked = drain != null && DrainTick.blockedFor(drain, now) != null;
        return new Sample(Map.of("kind", kind, "name", name, "node", node), blocked ? 1 : 0);
    }

    /** Current findings of every type (0 for types with none), per audit that has run. */
    public static List<Sample> findings(List<VMMapAudit> audits) {
        List<Sample> samples = new ArrayList<>();
        for (VMMapAudit audit : audits) {
            if (audit.getStatus() == null || audit.getStatus().getLastRun() == null) {
                continue;
            }
            Map<String, Integer> counts = audit.getStatus().getFindingCounts();
            for (VmMapFinding.Type type : VmMapFinding.Type.values()) {
                samples.add(new Sample(Map.of("audit", audit.getMetadata().getName(), "type", type.name()),
                        counts.getOrDefault(type.name(), 0)));
            }
        }
        return samples;
    }

    /** Epoch seconds of each audit's last run that compared all views. */
    public static List<Sample> lastCompleteRuns(List<VMMapAudit> audits) {
        List<Sample> samples = new ArrayList<>();
        for (VMMapAudit audit : audits) {
            String at = audit.getStatus() == null ? null : audit.getStatus().getLastCompleteRunAt();
            if (at != null) {
                samples.add(new Sample(Map.of("audit", audit.getMetadata().getName()), Timestamps.parse(at).getEpochSecond()));
            }
        }
        return samples;
    }

    /**
     * The interval each audit is meant to run at; absent while it is suspended (by its spec or by the
     * global switch), so that an alert on a stale audit does not fire for one that is off on purpose.
     */
    public static List<Sample> auditIntervals(List<VMMapAudit> audits, AuditSettings settings) {
        List<Sample> samples = new ArrayList<>();
        if (!settings.enabled()) {
            return samples;
        }
        for (VMMapAudit audit : audits) {
            if (audit.getSpec() != null && Boolean.TRUE.equals(audit.getSpec().getSuspend())) {
                continue;
            }
            Integer interval = audit.getSpec() == null ? null : audit.getSpec().getIntervalSeconds();
            samples.add(new Sample(Map.of("audit", audit.getMetadata().getName()), interval == null ? settings.intervalSeconds() : interval));
        }
        return samples;
    }
}
