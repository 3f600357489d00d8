package dev.cks.nodeops.audit;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cks.nodeops.audit.VmMapFinding.Type;
import dev.cks.nodeops.common.Timestamps;

/**
 * Decides which findings to announce, given what the status says was already announced. A finding is
 * announced once, and again only after it went away and came back: the reported set is replaced by
 * the current keys on every complete run. Pure; the reconciler stores {@link Plan#reportedKeys()} in
 * the status, so the decision survives restarts and holds for whichever replica leads.
 */
public final class FindingDedupe {
    /** Findings kept in the status; the count says how many there are in all. */
    static final int MAX_STORED_FINDINGS = 100;

    private FindingDedupe() {
    }

    /**
     * @param findings what the status shows, with first-seen times, at most {@link #MAX_STORED_FINDINGS}
     * @param findingCount all current findings, including those the status has no room for
     * @param toAnnounce new findings that get a Warning event each
     * @param notAnnounced new findings beyond the event cap, announced together in one summary event
     * @param announceInSync the run is clean after earlier findings: one Normal event
     * @param reportedKeys what to store in {@code status.reportedKeys}
     * @param countsByType all current findings by type, every type present (zero when none)
     */
    public record Plan(List<VmMapFinding> findings, int findingCount, List<Drift> toAnnounce, int notAnnounced,
            boolean announceInSync, List<String> reportedKeys, Map<Type, Integer> countsByType) {
    }

    /**
     * @param nodesCompared false when the Node list could not be read: earlier node findings are then
     *        carried as they were, neither cleared nor announced again (those beyond the status's list
     *        only as reported keys, so they are not counted, but they do keep "in sync" from being
     *        announced)
     */
    public static Plan plan(List<VmMapFinding> previousFindings, List<String> previousReportedKeys, List<Drift> current,
            boolean nodesCompared, int maxEventsPerRun, Instant now) {
        ReportedKeys reported = new ReportedKeys(previousReportedKeys);
        Map<String, VmMapFinding> previousByKey = new HashMap<>();
        previousFindings.forEach(finding -> previousByKey.putIfAbsent(finding.getKey(), finding));

        List<Drift> effective = new ArrayList<>(current);
        Set<String> nextKeys = new LinkedHashSet<>();
        if (!nodesCompared) {
            previousFindings.stream().filter(finding -> Drift.isAboutNodes(finding.getType())).map(Drift::of)
                    .forEach(effective::add);
            nextKeys.addAll(reported.nodeEntries());
        }

        List<VmMapFinding> findings = new ArrayList<>();
        List<Drift> fresh = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        Map<Type, Integer> countsByType = new EnumMap<>(Type.class);
        for (Type type : Type.values()) {
            countsByType.put(type, 0);
        }
        for (Drift drift : effective) {
            if (!seen.add(drift.key())) {
                continue;
            }
            nextKeys.add(drift.key());
            countsByType.merge(drift.type(), 1, Integer::sum);
            VmMapFinding previous = previousByKey.get(drift.key());
            if (findings.size() < MAX_STORED_FINDINGS) {
                findings.add(drift.toFinding(previous != null ? previous.getFirstSeen() : Timestamps.format(now)));
            }
            if (!reported.contains(drift.key())) {
                fresh.add(drift);
            }
        }
        int cap = Math.max(1, maxEventsPerRun);
        List<Drift> toAnnounce = fresh.size() > cap ? List.copyOf(fresh.subList(0, cap)) : List.copyOf(fresh);
        boolean hadFindings = !reported.isEmpty() || !previousFindings.isEmpty();
        return new Plan(findings, seen.size(), toAnnounce, fresh.size() - toAnnounce.size(),
                nextKeys.isEmpty() && hadFindings, ReportedKeys.encode(nextKeys), countsByType);
    }
}
