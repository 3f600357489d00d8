package dev.cks.nodeops.audit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.cks.nodeops.audit.VMMapAuditStatus.Phase;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.EventRecorder;
import dev.cks.nodeops.common.Timestamps;

/**
 * One audit of one VMMapAudit: decide whether to run, read the three views, check, dedupe, announce
 * and write the status. All I/O goes through the ports, so the whole flow runs in tests without a
 * cluster or CloudStack.
 */
public final class AuditPass {
    /** Reasons of the events the audit records. */
    public static final String DRIFT_EVENT = "VmMapDrift";
    public static final String IN_SYNC_EVENT = "VmMapInSync";

    /** What the reconciler does with the resource afterwards; no delay means wait for a spec change. */
    public record Outcome(VMMapAuditStatus status, Optional<Duration> rescheduleAfter) {
    }

    private final Clock clock;
    private final AuditSource source;
    private final NodeSource nodes;
    private final AuditSettings settings;
    private final EventRecorder events;
    private final AuditMetrics metrics;

    public AuditPass(Clock clock, AuditSource source, NodeSource nodes, AuditSettings settings, EventRecorder events,
            AuditMetrics metrics) {
        this.clock = clock;
        this.source = source;
        this.nodes = nodes;
        this.settings = settings;
        this.events = events;
        this.metrics = metrics;
    }

    public Outcome run(VMMapAudit audit) {
        VMMapAuditSpec spec = audit.getSpec() == null ? new VMMapAuditSpec() : audit.getSpec();
        VMMapAuditStatus status = audit.getStatus() == null ? new VMMapAuditStatus() : audit.getStatus();
        Long generation = audit.getMetadata().getGeneration();
        Instant startedAt = clock.instant();
        status.setObservedGeneration(generation);
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "the spec is valid", generation, startedAt);
        Duration interval = Duration.ofSeconds(orDefault(spec.getIntervalSeconds(), settings.intervalSeconds()));

        if (!settings.enabled()) {
            return idle(status, Phase.Suspended, "Disabled",
                    "Auditing is turned off for the whole operator; set the Helm value audit.enabled to true to turn it on.",
                    generation, startedAt);
        }
        if (Boolean.TRUE.equals(spec.getSuspend())) {
            return idle(status, Phase.Suspended, "Suspended",
                    "Auditing is suspended; set spec.suspend to false to resume it.", generation, startedAt);
        }
        CallCounter calls = new CallCounter();
        try {
            return audit(audit, spec, status, calls, startedAt, interval);
        } catch (AuditSourceException e) {
            // Findings stay as they were: an unreachable CloudStack says nothing about drift.
            Conditions.set(status.getConditions(), Conditions.CLOUDSTACK_REACHABLE, false, "Unreachable", e.getMessage(),
                    generation, startedAt);
            Conditions.setUnknown(status.getConditions(), Conditions.IN_SYNC, "CloudStackUnreachable",
                    "The audit could not read CloudStack; findings are from the last complete run.", generation, startedAt);
            status.setPhase(Phase.Error);
            status.setMessage(e.getMessage());
            status.setLastRun(lastRun(startedAt, calls.count, null, "CloudStack could not answer: " + e.getMessage()));
            metrics.countRun(audit.getMetadata().getName(), AuditMetrics.RunOutcome.UNREACHABLE);
            return new Outcome(status, Optional.of(interval));
        }
    }

    private Outcome audit(VMMapAudit audit, VMMapAuditSpec spec, VMMapAuditStatus status, CallCounter calls,
            Instant startedAt, Duration interval) {
        Long generation = audit.getMetadata().getGeneration();
        // Read first: with no cluster id the Node names are how the cluster is found.
        ClusterNodes clusterNodes = nodes.read();
        List<String> nodeNames = clusterNodes.nodes().stream().map(NodeView::name).toList();
        String wantedId = spec.getClusterId();
        if ((wantedId == null || wantedId.isBlank()) && !clusterNodes.available() && status.getClusterId() != null) {
            // Without Node names the cluster cannot be found again; the one found last time still is this cluster.
            wantedId = status.getClusterId();
        }
        String clusterId = wantedId;
        ClusterLookup lookup = calls.count(() -> source.cluster(clusterId, nodeNames));
        Conditions.set(status.getConditions(), Conditions.CLOUDSTACK_REACHABLE, true, "Reachable",
                "CloudStack answered the audit's calls.", generation, startedAt);
        if (lookup.cluster().isEmpty()) {
            String why = clusterNodes.available() ? lookup.refusal()
                    : lookup.refusal() + " Finding the cluster by its Nodes was not possible: " + clusterNodes.unavailableReason() + ".";
            status.setPhase(Phase.Error);
            status.setMessage(why);
            Conditions.setUnknown(status.getConditions(), Conditions.IN_SYNC, "ClusterNotFound", why, generation, startedAt);
            status.setLastRun(lastRun(startedAt, calls.count, null, why));
            metrics.countRun(audit.getMetadata().getName(), AuditMetrics.RunOutcome.ERROR);
            return new Outcome(status, Optional.of(interval));
        }
        ClusterView cluster = lookup.cluster().get();
        if (status.getClusterId() != null && !status.getClusterId().equals(cluster.id())) {
            // Findings and reported keys belong to the cluster they were found in; another cluster starts afresh.
            status.setFindings(null);
            status.setReportedKeys(null);
            status.setFindingCount(null);
        }
        status.setClusterId(cluster.id());
        Optional<String> skipReason = skipReason(cluster);
        if (skipReason.isPresent()) {
            status.setPhase(Phase.Skipped);
            status.setMessage(skipReason.get());
            Conditions.setUnknown(status.getConditions(), Conditions.IN_SYNC,
                    cluster.isCloudManaged() ? "ClusterNotSettled" : "ExternalManaged", skipReason.get(), generation, startedAt);
            status.setLastRun(lastRun(startedAt, calls.count, cluster.state(), skipReason.get()));
            metrics.countRun(audit.getMetadata().getName(), AuditMetrics.RunOutcome.SKIPPED);
            return new Outcome(status, Optional.of(interval));
        }

        List<OwnedVm> ownerVms = calls.count(() -> source.ownerVms(cluster));
        Set<String> otherMaps = calls.count(() -> source.otherClustersMappedIds(cluster));
        AuditSnapshot snapshot = new AuditSnapshot(cluster, ownerVms, otherMaps, clusterNodes, clock.instant(),
                Duration.ofSeconds(orDefault(spec.getGracePeriodSeconds(), settings.graceSeconds())), earlierMappedVms(status));
        List<Drift> drifts = VmMapChecker.check(snapshot);

        // A scale or upgrade that started meanwhile makes the views disagree for a moment; that is not drift.
        Optional<ClusterView> again = calls.count(() -> source.cluster(cluster.id(), nodeNames)).cluster();
        if (again.isEmpty() || again.get().changedSince(cluster)) {
            String note = "Cluster " + cluster.name() + " changed during the check (state or VM map); nothing was reported"
                    + " and the next run checks again.";
            status.setMessage(note);
            status.setLastRun(lastRun(startedAt, calls.count, again.map(ClusterView::state).orElse(cluster.state()), note));
            metrics.countRun(audit.getMetadata().getName(), AuditMetrics.RunOutcome.CHANGED);
            return new Outcome(status, Optional.of(interval));
        }

        FindingDedupe.Plan plan = FindingDedupe.plan(status.getFindings(), status.getReportedKeys(), drifts,
                clusterNodes.available(), orDefault(spec.getMaxEventsPerRun(), 5), startedAt);
        announce(audit, cluster, plan);

        status.setFindings(plan.findings());
        status.setFindingCount(plan.findingCount());
        Map<String, Integer> counts = new java.util.TreeMap<>();
        plan.countsByType().forEach((type, count) -> counts.put(type.name(), count));
        status.setFindingCounts(counts);
        status.setReportedKeys(plan.reportedKeys());
        String summary = summary(cluster, plan);
        status.setMessage(summary);
        status.setPhase(plan.findingCount() == 0 ? Phase.InSync : Phase.DriftFound);
        Conditions.set(status.getConditions(), Conditions.IN_SYNC, plan.findingCount() == 0,
                plan.findingCount() == 0 ? "InSync" : "DriftFound", summary, generation, startedAt);
        String note = clusterNodes.available() ? null
                : "Only the VM map and the VMs were compared: " + clusterNodes.unavailableReason() + ".";
        VMMapAuditStatus.LastRun lastRun = lastRun(startedAt, calls.count, cluster.state(), note);
        status.setLastRun(lastRun);
        if (note == null) {
            status.setLastCompleteRunAt(lastRun.getStartedAt());
        }
        metrics.recordComparison(audit.getMetadata().getName(), Duration.ofMillis(lastRun.getDurationMillis()), note == null);
        return new Outcome(status, Optional.of(interval));
    }

    private static Map<String, String> earlierMappedVms(VMMapAuditStatus status) {
        Map<String, String> earlier = new LinkedHashMap<>();
        status.getFindings().stream()
                .filter(finding -> finding.getVmId() != null && finding.getKey() != null
                        && finding.getKey().equals(Drift.mappedVmKey(finding.getVmId())))
                .forEach(finding -> earlier.putIfAbsent(finding.getVmId(), finding.getVmName()));
        return earlier;
    }

    private static Optional<String> skipReason(ClusterView cluster) {
        if (!cluster.isCloudManaged()) {
            return Optional.of("Cluster " + cluster.name() + " is " + cluster.clusterType()
                    + ": CloudStack does not manage its nodes' VMs, so there is no VM map to audit.");
        }
        if (!cluster.isSettled()) {
            return Optional.of("Cluster " + cluster.name() + " is " + cluster.state()
                    + "; the audit runs when CloudStack reports it Running or Alert.");
        }
        return Optional.empty();
    }

    private void announce(VMMapAudit audit, ClusterView cluster, FindingDedupe.Plan plan) {
        plan.toAnnounce().forEach(drift -> events.warning(audit, DRIFT_EVENT, drift.message()));
        if (plan.notAnnounced() > 0) {
            events.warning(audit, DRIFT_EVENT, plan.notAnnounced() + " more new findings in cluster " + cluster.name()
                    + "; see status.findings of VMMapAudit " + audit.getMetadata().getName() + ".");
        }
        if (plan.announceInSync()) {
            events.normal(audit, IN_SYNC_EVENT,
                    "Cluster " + cluster.name() + " is in sync again: its VM map, VMs and Nodes agree.");
        }
    }

    private static String summary(ClusterView cluster, FindingDedupe.Plan plan) {
        int count = plan.findingCount();
        if (count == 0) {
            return "Cluster " + cluster.name() + ": VM map, VMs and Nodes agree.";
        }
        String shown = count > plan.findings().size() ? " (status lists the first " + plan.findings().size() + ")" : "";
        return count + (count == 1 ? " finding" : " findings") + " in cluster " + cluster.name() + shown + ".";
    }

    private Outcome idle(VMMapAuditStatus status, Phase phase, String reason, String message, Long generation, Instant now) {
        status.setPhase(phase);
        status.setMessage(message);
        Conditions.setUnknown(status.getConditions(), Conditions.IN_SYNC, reason, message, generation, now);
        return new Outcome(status, Optional.empty());
    }

    private VMMapAuditStatus.LastRun lastRun(Instant startedAt, int calls, String clusterState, String note) {
        VMMapAuditStatus.LastRun lastRun = new VMMapAuditStatus.LastRun();
        lastRun.setStartedAt(Timestamps.format(startedAt));
        lastRun.setDurationMillis(Math.max(0, Duration.between(startedAt, clock.instant()).toMillis()));
        lastRun.setCloudStackCalls(calls);
        lastRun.setClusterState(clusterState);
        lastRun.setNote(note);
        return lastRun;
    }

    private static int orDefault(Integer value, int fallback) {
        return value == null ? fallback : value;
    }

    /** Counts calls to CloudStack, including the one that failed. */
    private static final class CallCounter {
        int count;

        <T> T count(java.util.function.Supplier<T> call) {
            count++;
            return call.get();
        }
    }
}
