package dev.cks.nodeops.audit;

import static dev.cks.nodeops.audit.Snapshots.NOW;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.audit.VmMapFinding.Type;

class VmMapCheckerTest {
    private static final String CONTROL = "prod-control-18c2f3a9b0";
    private static final String WORKER = "prod-node-18c2f3a9b1";
    private static final String WORKER2 = "prod-node-18c2f3a9b2";

    private final Snapshots cluster = new Snapshots();

    @Test
    void aClusterWhoseViewsAgreeHasNoFindings() {
        cluster.healthy("v1", CONTROL).healthy("v2", WORKER).healthy("v3", WORKER2);
        assertThat(cluster.check()).isEmpty();
    }

    @Test
    void anEmptyClusterHasNoFindings() {
        assertThat(cluster.check()).isEmpty();
    }

    @Test
    void unrelatedVmsAndNodesOfTheOwnerAreIgnoredOnlyWhenTheyAreNotOurs() {
        cluster.healthy("v1", CONTROL).owned("x1", "jump-host", "Running").owned("x2", "staging-node-18c2f3a9b1", "Running");
        assertThat(cluster.check()).isEmpty();
    }

    @Nested
    class VersionRecord {
        @Test
        void aNodeOnTheVersionCloudStackRecordsIsNoFinding() {
            cluster.versioned("v1", CONTROL, "1.33.1", "v1.33.1").versioned("v2", WORKER, "1.33.1", "v1.33.1");
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void aNodeUpgradedBehindCloudStacksBackIsReportedWithBothVersions() {
            cluster.versioned("v1", CONTROL, "1.33.1", "v1.34.2").versioned("v2", WORKER, "1.33.1", "v1.33.1");
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::vmId, Drift::node)
                    .containsExactly(tuple(Type.VersionRecordStale, "version:v1", "v1", CONTROL));
            assertThat(cluster.check().get(0).message()).startsWith("Node " + CONTROL + " runs Kubernetes v1.34.2, but CloudStack records 1.33.1");
            assertThat(cluster.check().get(0).message()).as("what the record means for scale-ups, and what corrects those nodes")
                    .contains("a scale-up joins nodes at 1.33.1").contains("spec.mode Continuous");
        }

        @Test
        void aServerThatRecordsNoVersionOrANodeThatReportsNoneIsNotJudged() {
            cluster.versioned("v1", CONTROL, null, "v1.34.2").versioned("v2", WORKER, "1.33.1", null);
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void aNodeNamedByItsFqdnIsComparedToo() {
            cluster.map.add(new MappedVm("v1", CONTROL, "Running", "1.33.1"));
            cluster.owned("v1", CONTROL, "Running");
            cluster.nodes.add(new NodeView(CONTROL + ".cluster.local", Snapshots.LONG_AGO, "v1.34.2"));
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.VersionRecordStale);
        }
    }

    @Nested
    class MappedVmState {
        @Test
        void destroyedMappedVm() {
            cluster.healthy("v1", CONTROL).mapped("v2", WORKER, "Running").owned("v2", WORKER, "Destroyed").node(WORKER);
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::vmId, Drift::vmName, Drift::message)
                    .containsExactly(tuple(Type.MappedVmDestroyed, "vm:v2", "v2", WORKER,
                            "VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Destroyed."));
        }

        @Test
        void expungingCountsAsDestroyed() {
            cluster.mapped("v2", WORKER, "Running").owned("v2", WORKER, "Expunging");
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.MappedVmDestroyed);
        }

        @Test
        void expungedMappedVm() {
            cluster.mapped("v2", WORKER, "Expunged");
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::message)
                    .containsExactly(tuple(Type.MappedVmExpunged, "vm:v2",
                            "VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but Expunged."));
        }

        @Test
        void mappedVmInError() {
            cluster.mapped("v2", WORKER, "Running").owned("v2", WORKER, "Error").node(WORKER);
            assertThat(cluster.check()).extracting(Drift::type, Drift::message)
                    .containsExactly(tuple(Type.MappedVmError, "VM prod-node-18c2f3a9b1 (v2) is in the cluster's map but in state Error."));
        }

        @Test
        void mappedIdThatNoListKnowsIsMissing() {
            cluster.mapped("v2", null, null);
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::message)
                    .containsExactly(tuple(Type.MappedVmMissing, "vm:v2", "VM v2 is in the cluster's map but CloudStack lists no such VM."));
        }

        @Test
        void destroyedExpungedAndMissingShareOneKey() {
            Snapshots destroyed = new Snapshots().mapped("v2", WORKER, "Destroyed");
            Snapshots expunged = new Snapshots().mapped("v2", WORKER, "Expunged");
            Snapshots missing = new Snapshots().mapped("v2", null, null);
            assertThat(List.of(destroyed.check().get(0).key(), expunged.check().get(0).key(), missing.check().get(0).key()))
                    .containsOnly("vm:v2");
        }

        @Test
        void theOwnersListOutranksTheMapsEmbeddedState() {
            cluster.mapped("v2", WORKER, "Running").owned("v2", WORKER, "Destroyed");
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.MappedVmDestroyed);
        }

        @Test
        void aMappedVmTheOwnersListOmitsIsJudgedByItsRow() {
            // Some callers' lists leave out destroyed VMs; the map row still says what happened.
            cluster.mapped("v2", WORKER, "Destroyed");
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.MappedVmDestroyed);
        }

        @Test
        void duplicateMapRowsGiveOneFinding() {
            cluster.mapped("v2", null, null).mapped("v2", WORKER, "Destroyed").mapped("v2", WORKER, "Destroyed");
            assertThat(cluster.check()).extracting(Drift::type, Drift::vmName)
                    .containsExactly(tuple(Type.MappedVmDestroyed, WORKER));
        }

        @Test
        void duplicateRowsOfAHealthyVmGiveNothing() {
            cluster.healthy("v1", WORKER).mapped("v1", WORKER, "Running");
            assertThat(cluster.check()).isEmpty();
        }
    }

    @Nested
    class VmsCloudStackCountsButNoLongerShows {
        @Test
        void aReportedVmThatVanishedFromTheMapKeepsItsKey() {
            cluster.healthy("v1", CONTROL).healthy("v2", WORKER);
            cluster.declaredVmCount = 3;
            cluster.earlierMappedVms.put("v3", WORKER2);
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::vmName, Drift::message)
                    .containsExactly(tuple(Type.MappedVmMissing, "vm:v3", WORKER2,
                            "VM prod-node-18c2f3a9b2 (v3) is in the cluster's map but CloudStack lists no such VM."));
        }

        @Test
        void aNodeStillNamedLikeTheVanishedVmIsNotReportedTwice() {
            cluster.healthy("v1", CONTROL).node(WORKER2);
            cluster.declaredVmCount = 2;
            cluster.earlierMappedVms.put("v3", WORKER2);
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.MappedVmMissing);
        }

        @Test
        void anUnexplainedShortfallIsOneFinding() {
            cluster.healthy("v1", CONTROL).healthy("v2", WORKER);
            cluster.declaredVmCount = 4;
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::message)
                    .containsExactly(tuple(Type.MappedVmMissing, "map:uncounted",
                            "Cluster prod counts 4 VMs, but 2 of them are in neither its VM map nor any VM list;"
                                    + " probably expunged while still in the cluster."));
        }

        @Test
        void rememberedVmsExplainOnlyTheShortfall() {
            cluster.healthy("v1", CONTROL);
            cluster.declaredVmCount = 2;
            cluster.earlierMappedVms.put("v7", "prod-node-aaaaaaaa07");
            cluster.earlierMappedVms.put("v8", "prod-node-aaaaaaaa08");
            assertThat(cluster.check()).extracting(Drift::key).containsExactly("vm:v7");
            cluster.declaredVmCount = 4;
            assertThat(cluster.check()).extracting(Drift::key, Drift::message).containsExactly(
                    tuple("map:uncounted", "Cluster prod counts 4 VMs, but 1 of them is in neither its VM map nor any VM list;"
                            + " probably expunged while still in the cluster."),
                    tuple("vm:v7", "VM prod-node-aaaaaaaa07 (v7) is in the cluster's map but CloudStack lists no such VM."),
                    tuple("vm:v8", "VM prod-node-aaaaaaaa08 (v8) is in the cluster's map but CloudStack lists no such VM."));
        }

        @Test
        void aVmRemovedFromTheMapProperlyIsForgotten() {
            // CloudStack lowered its count too: the entry was removed, not lost.
            cluster.healthy("v1", CONTROL).healthy("v2", WORKER);
            cluster.declaredVmCount = 2;
            cluster.earlierMappedVms.put("v3", WORKER2);
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void aRememberedVmThatStillExistsIsNotMissing() {
            cluster.healthy("v1", CONTROL).owned("v3", WORKER2, "Stopped");
            cluster.declaredVmCount = 2;
            cluster.earlierMappedVms.put("v3", WORKER2);
            assertThat(cluster.nodesUnavailable().check()).extracting(Drift::key)
                    .as("it is out of the map, not gone").containsExactly("map:uncounted", "unmapped:v3");
        }

        @Test
        void anUnknownCountComparesNothing() {
            cluster.healthy("v1", CONTROL);
            cluster.earlierMappedVms.put("v3", WORKER2);
            assertThat(cluster.check()).isEmpty();
        }
    }

    @Nested
    class StoppedVms {
        @Test
        void aMappedStoppedVmWithoutNodeIsNotReported() {
            cluster.healthy("v1", CONTROL).mapped("v2", WORKER, "Stopped").owned("v2", WORKER, "Stopped");
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void transitionalStatesAreNotReported() {
            for (String state : List.of("Starting", "Stopping", "Migrating")) {
                Snapshots snapshot = new Snapshots().mapped("v2", WORKER, state).owned("v2", WORKER, state);
                assertThat(snapshot.check()).as(state).isEmpty();
            }
        }

        @Test
        void aStoppedVmStillMatchesItsNode() {
            cluster.mapped("v2", WORKER, "Stopped").owned("v2", WORKER, "Stopped").node(WORKER);
            assertThat(cluster.check()).isEmpty();
        }
    }

    @Nested
    class UnmappedVms {
        @Test
        void aVmNamedAsOurNodeInNoMapIsReported() {
            cluster.healthy("v1", CONTROL).owned("v9", WORKER2, "Running").node(WORKER2);
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::vmId, Drift::message)
                    .containsExactly(tuple(Type.UnmappedVm, "unmapped:v9", "v9",
                            "VM prod-node-18c2f3a9b2 (v9) is named as a node of cluster prod but is in no cluster's VM map."));
        }

        @Test
        void everyRoleCounts() {
            cluster.owned("a", "prod-control-18c2f3a9b7", "Running").owned("b", "prod-etcd-2-18c2f3a9b8", "Stopped");
            assertThat(cluster.nodesUnavailable().check()).extracting(Drift::vmId).containsExactly("a", "b");
        }

        @Test
        void notWhenAnotherClustersMapHoldsIt() {
            cluster.owned("v9", WORKER2, "Running").otherClusterMaps("v9");
            assertThat(cluster.nodesUnavailable().check()).isEmpty();
        }

        @Test
        void notWithinTheGracePeriodOfItsCreation() {
            cluster.owned("v9", WORKER2, "Running", NOW.minus(Duration.ofMinutes(14)), null);
            assertThat(cluster.nodesUnavailable().check()).isEmpty();
            cluster.now = NOW.plus(Duration.ofMinutes(1));
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.UnmappedVm);
        }

        @Test
        void unknownCreationCountsAsOld() {
            cluster.owned("v9", WORKER2, "Running", null, null);
            assertThat(cluster.nodesUnavailable().check()).extracting(Drift::type).containsExactly(Type.UnmappedVm);
        }

        @Test
        void destroyedLeftoversAreNotReported() {
            cluster.owned("v9", WORKER2, "Destroyed").owned("v8", "prod-node-18c2f3a9b8", "Expunging");
            assertThat(cluster.nodesUnavailable().check()).isEmpty();
        }

        @Test
        void olderFortyCharPrefixCounts() {
            cluster.clusterName = "a-very-long-cluster-name-for-the-analytics-team-eu";
            cluster.owned("v9", cluster.clusterName.substring(0, 40) + "-node-18c2f3a9b1", "Running");
            assertThat(cluster.nodesUnavailable().check()).extracting(Drift::type).containsExactly(Type.UnmappedVm);
        }
    }

    @Nested
    class NodesWithoutVm {
        @Test
        void aNodeNoVmExplainsIsReported() {
            cluster.healthy("v1", CONTROL).node("laptop-of-bob");
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::node, Drift::message)
                    .containsExactly(tuple(Type.NodeWithoutVm, "node:laptop-of-bob", "laptop-of-bob",
                            "Node laptop-of-bob matches no VM of cluster prod."));
        }

        @Test
        void aNodeNamedByItsVmsFqdnMatches() {
            cluster.mapped("v1", CONTROL, "Running").owned("v1", CONTROL, "Running").node(CONTROL + ".cluster.local")
                    .mapped("v2", WORKER, "Running").owned("v2", WORKER, "Running").node(WORKER + ".example.com");
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void nodeNamesCompareCaseInsensitively() {
            cluster.mapped("v1", "PROD-node-18c2f3a9b1", "Running").owned("v1", "PROD-node-18c2f3a9b1", "Running").node(WORKER);
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void aNodeWhoseNameOnlyStartsLikeAVmDoesNotMatch() {
            cluster.healthy("v1", WORKER).node(WORKER + "0").node(WORKER + "-x.example.com");
            assertThat(cluster.check()).extracting(Drift::node).containsExactly(WORKER + "0", WORKER + "-x.example.com");
        }

        @Test
        void aNodeOfAnUnmappedVmIsCoveredByTheUnmappedFinding() {
            cluster.owned("v9", WORKER2, "Running").node(WORKER2);
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.UnmappedVm);
        }

        @Test
        void aNodeOfAMappedDestroyedVmIsCoveredByTheMapFinding() {
            cluster.mapped("v2", WORKER, "Destroyed").node(WORKER);
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.MappedVmDestroyed);
        }

        @Test
        void aNewNodeHasTheGracePeriod() {
            cluster.node("bob-1", NOW.minus(Duration.ofMinutes(5)));
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void notComparedWhenTheNodesAreUnavailable() {
            cluster.node("laptop-of-bob").nodesUnavailable();
            assertThat(cluster.check()).isEmpty();
        }
    }

    @Nested
    class VmsThatAreNotNodes {
        @Test
        void aRunningMappedVmWithoutNodeIsReported() {
            cluster.healthy("v1", CONTROL).mapped("v2", WORKER, "Running").owned("v2", WORKER, "Running");
            assertThat(cluster.check()).extracting(Drift::type, Drift::key, Drift::message)
                    .containsExactly(tuple(Type.VmNotANode, "notanode:v2",
                            "VM prod-node-18c2f3a9b1 (v2) is Running and in the cluster's map but no Node has its name."));
        }

        @Test
        void notWithinTheGracePeriodOfCreation() {
            cluster.mapped("v2", WORKER, "Running").owned("v2", WORKER, "Running", NOW.minus(Duration.ofMinutes(10)), null);
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void notWithinTheGracePeriodOfTheLastStateChange() {
            cluster.mapped("v2", WORKER, "Running")
                    .owned("v2", WORKER, "Running", Snapshots.LONG_AGO, NOW.minus(Duration.ofMinutes(3)));
            assertThat(cluster.check()).isEmpty();
            cluster.now = NOW.plus(Duration.ofMinutes(12));
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.VmNotANode);
        }

        @Test
        void etcdVmsAreLeftOut() {
            cluster.mapped("e1", "prod-etcd-1-18c2f3a9b1", "Running").owned("e1", "prod-etcd-1-18c2f3a9b1", "Running");
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void notComparedWhenTheNodesAreUnavailable() {
            cluster.mapped("v2", WORKER, "Running").owned("v2", WORKER, "Running").nodesUnavailable();
            assertThat(cluster.check()).isEmpty();
        }

        @Test
        void aMappedVmWithAnUnusualNameStillHasToBeANode() {
            // Older clusters and VMs added by hand keep their names; being mapped and Running is what counts.
            cluster.mapped("v5", "gpu-worker-1", "Running").owned("v5", "gpu-worker-1", "Running");
            assertThat(cluster.check()).extracting(Drift::type).containsExactly(Type.VmNotANode);
        }
    }

    @Test
    void findingsComeInAStableOrder() {
        cluster.mapped("v2", WORKER, "Destroyed").owned("v9", WORKER2, "Running").node("bob")
                .mapped("v3", CONTROL, "Running").owned("v3", CONTROL, "Running");
        List<Type> first = cluster.check().stream().map(Drift::type).toList();
        assertThat(first).containsExactly(Type.MappedVmDestroyed, Type.UnmappedVm, Type.NodeWithoutVm, Type.VmNotANode);
        assertThat(cluster.check().stream().map(Drift::type).toList()).isEqualTo(first);
    }

    @Test
    void theRecordedCloudStackClusterWithItsNodesIsInSync() throws Exception {
        JsonNode recorded;
        try (InputStream in = getClass().getResourceAsStream("/cloudstack/listKubernetesClusters.json")) {
            recorded = new ObjectMapper().readTree(in).path("listkubernetesclustersresponse").path("kubernetescluster").get(0);
        }
        List<MappedVm> map = new ArrayList<>();
        recorded.path("virtualmachines").forEach(vm -> map.add(new MappedVm(vm.path("id").asText(), vm.path("name").asText(), vm.path("state").asText())));
        ClusterView view = new ClusterView(recorded.path("id").asText(), recorded.path("name").asText(), "Running", null, map);
        AuditSnapshot snapshot = new AuditSnapshot(view, List.of(), null,
                ClusterNodes.of(List.of(new NodeView("cks-cluster-control-1803b55c32d", Snapshots.LONG_AGO),
                        new NodeView("cks-cluster-node-1803b55f08c", Snapshots.LONG_AGO))),
                NOW, Duration.ofMinutes(15));
        assertThat(view.isCloudManaged()).as("no clustertype in 4.17 answers").isTrue();
        assertThat(VmMapChecker.check(snapshot)).isEmpty();
    }
}
