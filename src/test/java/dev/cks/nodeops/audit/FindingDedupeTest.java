package dev.cks.nodeops.audit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.audit.FindingDedupe.Plan;
import dev.cks.nodeops.audit.VmMapFinding.Type;

class FindingDedupeTest {
    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    private static final Instant T1 = T0.plus(Duration.ofMinutes(5));

    private static Drift destroyed(String id) {
        return new Drift(Type.MappedVmDestroyed, "vm:" + id, id, "prod-node-" + id, null, "VM " + id + " is Destroyed.");
    }

    private static Drift expunged(String id) {
        return new Drift(Type.MappedVmExpunged, "vm:" + id, id, "prod-node-" + id, null, "VM " + id + " is Expunged.");
    }

    private static Drift missing(String id) {
        return new Drift(Type.MappedVmMissing, "vm:" + id, id, null, null, "VM " + id + " is missing.");
    }

    private static Drift nodeWithoutVm(String name) {
        return new Drift(Type.NodeWithoutVm, "node:" + name, null, null, name, "Node " + name + " matches no VM.");
    }

    private static Drift notANode(String id) {
        return new Drift(Type.VmNotANode, "notanode:" + id, id, "prod-node-" + id, null, "VM " + id + " is no Node.");
    }

    /** Runs the dedupe as the reconciler does, feeding each plan's status into the next run. */
    private static final class Runs {
        List<VmMapFinding> findings = List.of();
        List<String> reportedKeys = List.of();
        int maxEvents = 5;

        Plan run(Instant now, boolean nodesCompared, Drift... current) {
            Plan plan = FindingDedupe.plan(findings, reportedKeys, List.of(current), nodesCompared, maxEvents, now);
            findings = plan.findings();
            reportedKeys = plan.reportedKeys();
            return plan;
        }

        Plan run(Instant now, Drift... current) {
            return run(now, true, current);
        }
    }

    private final Runs runs = new Runs();

    @Test
    void aNewFindingIsAnnouncedOnce() {
        Plan first = runs.run(T0, destroyed("a"));
        assertThat(first.toAnnounce()).extracting(Drift::key).containsExactly("vm:a");
        assertThat(first.reportedKeys()).containsExactly("vm:a");
        assertThat(first.findings()).extracting(VmMapFinding::getFirstSeen).containsExactly("2026-11-30T12:00:00Z");

        Plan second = runs.run(T1, destroyed("a"));
        assertThat(second.toAnnounce()).isEmpty();
        assertThat(second.findings()).extracting(VmMapFinding::getFirstSeen).as("first seen is kept")
                .containsExactly("2026-11-30T12:00:00Z");
    }

    @Test
    void aFindingThatWentAwayAndCameBackIsAnnouncedAgain() {
        runs.run(T0, destroyed("a"), nodeWithoutVm("bob"));
        Plan gone = runs.run(T1, nodeWithoutVm("bob"));
        assertThat(gone.toAnnounce()).isEmpty();
        assertThat(gone.reportedKeys()).containsExactly("node:bob");
        Plan back = runs.run(T1.plusSeconds(300), destroyed("a"), nodeWithoutVm("bob"));
        assertThat(back.toAnnounce()).extracting(Drift::key).containsExactly("vm:a");
        assertThat(back.findings()).filteredOn(f -> f.getKey().equals("vm:a")).extracting(VmMapFinding::getFirstSeen)
                .containsExactly("2026-11-30T12:10:00Z");
    }

    @Test
    void aMappedVmKeepsOneIdentityFromDestroyedToExpungedToGone() {
        assertThat(runs.run(T0, destroyed("a")).toAnnounce()).hasSize(1);
        Plan expungedRun = runs.run(T1, expunged("a"));
        assertThat(expungedRun.toAnnounce()).isEmpty();
        assertThat(expungedRun.findings()).extracting(VmMapFinding::getType, VmMapFinding::getFirstSeen)
                .containsExactly(org.assertj.core.api.Assertions.tuple(Type.MappedVmExpunged, "2026-11-30T12:00:00Z"));
        Plan missingRun = runs.run(T1.plusSeconds(300), missing("a"));
        assertThat(missingRun.toAnnounce()).isEmpty();
        assertThat(missingRun.findings()).extracting(VmMapFinding::getType).containsExactly(Type.MappedVmMissing);
    }

    @Test
    void whenTheSetChangesOnlyNewFindingsAreAnnounced() {
        runs.run(T0, destroyed("a"), destroyed("b"));
        Plan plan = runs.run(T1, destroyed("b"), destroyed("c"), nodeWithoutVm("bob"));
        assertThat(plan.toAnnounce()).extracting(Drift::key).containsExactly("vm:c", "node:bob");
        assertThat(plan.reportedKeys()).containsExactly("vm:b", "vm:c", "node:bob");
    }

    @Test
    void moreNewFindingsThanTheCapGiveThatManyEventsAndOneSummary() {
        Drift[] seven = IntStream.range(0, 7).mapToObj(i -> destroyed("v" + i)).toArray(Drift[]::new);
        Plan plan = runs.run(T0, seven);
        assertThat(plan.toAnnounce()).extracting(Drift::key).containsExactly("vm:v0", "vm:v1", "vm:v2", "vm:v3", "vm:v4");
        assertThat(plan.notAnnounced()).isEqualTo(2);
        assertThat(plan.reportedKeys()).as("the summarised ones count as reported").hasSize(7);
        assertThat(runs.run(T1, seven).toAnnounce()).isEmpty();
    }

    @Test
    void exactlyTheCapNeedsNoSummary() {
        runs.maxEvents = 2;
        Plan plan = runs.run(T0, destroyed("a"), destroyed("b"));
        assertThat(plan.toAnnounce()).hasSize(2);
        assertThat(plan.notAnnounced()).isZero();
    }

    @Test
    void cleanAgainAfterFindingsIsAnnouncedOnce() {
        runs.run(T0, destroyed("a"));
        Plan clean = runs.run(T1);
        assertThat(clean.announceInSync()).isTrue();
        assertThat(clean.findingCount()).isZero();
        assertThat(clean.reportedKeys()).isEmpty();
        assertThat(runs.run(T1.plusSeconds(300)).announceInSync()).as("only once").isFalse();
    }

    @Test
    void aClusterCleanFromTheStartAnnouncesNothing() {
        Plan plan = runs.run(T0);
        assertThat(plan.announceInSync()).isFalse();
        assertThat(plan.toAnnounce()).isEmpty();
    }

    @Test
    void theSameKeyTwiceInOneRunCountsOnce() {
        Plan plan = runs.run(T0, destroyed("a"), expunged("a"));
        assertThat(plan.toAnnounce()).hasSize(1);
        assertThat(plan.findingCount()).isEqualTo(1);
    }

    @Test
    void nodeFindingsAreKeptAsTheyWereWhileTheNodesAreUnreadable() {
        runs.run(T0, destroyed("a"), nodeWithoutVm("bob"), notANode("c"));
        Plan blind = runs.run(T1, false, destroyed("a"));
        assertThat(blind.toAnnounce()).as("not announced again").isEmpty();
        assertThat(blind.announceInSync()).isFalse();
        assertThat(blind.findings()).extracting(VmMapFinding::getKey, VmMapFinding::getFirstSeen).containsExactlyInAnyOrder(
                org.assertj.core.api.Assertions.tuple("vm:a", "2026-11-30T12:00:00Z"),
                org.assertj.core.api.Assertions.tuple("node:bob", "2026-11-30T12:00:00Z"),
                org.assertj.core.api.Assertions.tuple("notanode:c", "2026-11-30T12:00:00Z"));
        assertThat(blind.reportedKeys()).containsExactlyInAnyOrder("vm:a", "node:bob", "notanode:c");
        Plan sighted = runs.run(T1.plusSeconds(300), true, destroyed("a"), nodeWithoutVm("bob"));
        assertThat(sighted.toAnnounce()).as("bob was reported before the blind run").isEmpty();
        assertThat(sighted.reportedKeys()).containsExactlyInAnyOrder("vm:a", "node:bob");
    }

    @Test
    void mapFindingsStillClearWhileTheNodesAreUnreadable() {
        runs.run(T0, destroyed("a"), nodeWithoutVm("bob"));
        Plan blind = runs.run(T1, false);
        assertThat(blind.findings()).extracting(VmMapFinding::getKey).containsExactly("node:bob");
        assertThat(blind.announceInSync()).as("bob is still a finding").isFalse();
    }

    @Test
    void manyKeysAreStoredAsHashesAndStillDedupe() {
        Drift[] many = IntStream.range(0, 250).mapToObj(i -> destroyed(String.format("id-%04d", i))).toArray(Drift[]::new);
        Plan first = runs.run(T0, many);
        assertThat(first.reportedKeys()).hasSize(250).allSatisfy(entry -> assertThat(entry).matches("vm:#[0-9a-f]{12}"));
        assertThat(first.findingCount()).isEqualTo(250);
        assertThat(first.findings()).as("the status keeps a bounded list").hasSize(FindingDedupe.MAX_STORED_FINDINGS);
        assertThat(first.notAnnounced()).isEqualTo(245);

        List<Drift> next = new ArrayList<>(List.of(many));
        next.add(nodeWithoutVm("bob"));
        Plan second = runs.run(T1, next.toArray(Drift[]::new));
        assertThat(second.toAnnounce()).extracting(Drift::key).containsExactly("node:bob");
        assertThat(second.reportedKeys()).contains(ReportedKeys.hashed("node:bob"));
    }

    @Test
    void switchingFromHashesBackToPlainKeysLosesNothing() {
        Drift[] many = IntStream.range(0, 250).mapToObj(i -> destroyed("v" + i)).toArray(Drift[]::new);
        runs.run(T0, many);
        Plan fewer = runs.run(T1, destroyed("v1"), destroyed("v2"));
        assertThat(fewer.toAnnounce()).isEmpty();
        assertThat(fewer.reportedKeys()).containsExactly("vm:v1", "vm:v2");
    }

    @Test
    void hashedNodeKeysSurviveABlindRun() {
        List<Drift> many = new ArrayList<>();
        IntStream.range(0, 250).forEach(i -> many.add(destroyed("v" + i)));
        many.add(nodeWithoutVm("bob"));
        runs.run(T0, many.toArray(Drift[]::new));
        runs.findings = List.of(); // as if bob's finding had not fit in the status
        runs.run(T1, false, destroyed("v1"));
        assertThat(runs.reportedKeys).contains(ReportedKeys.hashed("node:bob"));
        assertThat(runs.run(T1.plusSeconds(300), true, destroyed("v1"), nodeWithoutVm("bob")).toAnnounce()).isEmpty();
    }

    @Test
    void noInSyncWhileUnlistedNodeFindingsMayRemain() {
        List<Drift> many = new ArrayList<>();
        IntStream.range(0, 250).forEach(i -> many.add(destroyed("v" + i)));
        many.add(nodeWithoutVm("bob"));
        runs.run(T0, many.toArray(Drift[]::new));
        runs.findings = List.of(); // bob's finding did not fit in the status
        Plan blind = runs.run(T1, false);
        assertThat(blind.announceInSync()).as("bob may still be there").isFalse();
        assertThat(blind.reportedKeys()).containsExactly(ReportedKeys.hashed("node:bob"));
        assertThat(runs.run(T1.plusSeconds(300), true).announceInSync()).as("now it is known to be clean").isTrue();
    }

    @Test
    void hashesKeepTheKindAndAreStable() {
        assertThat(ReportedKeys.hashed("node:bob")).startsWith("node:#").hasSize("node:#".length() + 12)
                .isEqualTo(ReportedKeys.hashed("node:bob"));
        assertThat(ReportedKeys.hashed("vm:a")).isNotEqualTo(ReportedKeys.hashed("vm:b"));
        assertThat(ReportedKeys.isHashed(ReportedKeys.hashed("vm:a"))).isTrue();
        assertThat(ReportedKeys.isHashed("vm:a")).isFalse();
    }

    @Test
    void theStoredKeysAreBoundedSoTheStatusStaysStorable() {
        List<String> keys = IntStream.range(0, ReportedKeys.MAX_ENTRIES + 10).mapToObj(i -> "vm:" + i).toList();
        assertThat(ReportedKeys.encode(keys)).hasSize(ReportedKeys.MAX_ENTRIES);
    }
}
