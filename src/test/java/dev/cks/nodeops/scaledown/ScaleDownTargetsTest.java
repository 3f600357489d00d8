package dev.cks.nodeops.scaledown;

import dev.cks.nodeops.testing.TestNodes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.VirtualMachine;
import dev.cks.nodeops.scaledown.ScaleDownStatus.RemovalCommand;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.scaledown.ScaleDownTargets.Candidate;
import io.fabric8.kubernetes.api.model.Node;

class ScaleDownTargetsTest {
    private static final String OWNER = "ScaleDown/remove-two/uid-1";
    private static final java.util.function.Predicate<String> NONE_GONE = owner -> false;

    @Test
    void fewestPodsPicksTheLeastLoadedThenTheNewest() {
        Instant old = Instant.parse("2026-01-01T00:00:00Z");
        Instant newer = Instant.parse("2026-02-01T00:00:00Z");
        List<Candidate> candidates = List.of(
                new Candidate("busy", 9, newer),
                new Candidate("old-empty", 0, old),
                new Candidate("new-empty", 0, newer),
                new Candidate("one-pod", 1, old),
                new Candidate("b-same", 1, old));

        assertThat(ScaleDownTargets.fewestPods(3, candidates)).containsExactly("new-empty", "old-empty", "b-same");
        assertThat(ScaleDownTargets.fewestPods(9, candidates)).hasSize(5).endsWith("busy");
    }

    @Test
    void refusesUnknownControlPlaneAndLockedNodesNamingEach() {
        Map<String, Node> nodes = nodes(
                worker("w1", null), worker("w2", "NodeUpgrade/to-1-36"), controlPlane("cp1"), worker("spare", null));

        List<String> refusals = ScaleDownTargets.refusals(List.of("w1", "w2", "cp1", "ghost"), nodes, OWNER, NONE_GONE);

        assertThat(refusals).hasSize(3);
        assertThat(refusals).anySatisfy(r -> assertThat(r).startsWith("Node w2 is locked by NodeUpgrade/to-1-36"));
        assertThat(refusals).anySatisfy(r -> assertThat(r).startsWith("Node cp1 is a control-plane node"));
        assertThat(refusals).anySatisfy(r -> assertThat(r).startsWith("Node ghost does not exist"));
    }

    @Test
    void ourOwnLockIsNoRefusal() {
        Map<String, Node> nodes = nodes(worker("w1", OWNER), worker("spare", null));

        assertThat(ScaleDownTargets.refusals(List.of("w1"), nodes, OWNER, NONE_GONE)).isEmpty();
    }

    @Test
    void aLockWhoseOperationIsGoneIsNoRefusalAndItsNodeMayBePicked() {
        String gone = "ScaleDown/deleted-long-ago/uid-0";
        Map<String, Node> nodes = nodes(worker("w1", gone), worker("spare", null));

        assertThat(ScaleDownTargets.refusals(List.of("w1"), nodes, OWNER, gone::equals)).isEmpty();
        assertThat(ScaleDownTargets.refusals(List.of("w1"), nodes, OWNER, NONE_GONE)).singleElement().asString()
                .startsWith("Node w1 is locked by ScaleDown/deleted-long-ago;");
    }

    @Test
    void withEveryOtherWorkerHeldByAnotherScaleDownNoneWouldRemainAndTheRefusalNamesIt() {
        Map<String, Node> nodes = nodes(worker("w1", OWNER), worker("w2", OWNER), worker("w3", "ScaleDown/other/uid-2"), controlPlane("cp1"));

        assertThat(ScaleDownTargets.noWorkerLeft(List.of("w1", "w2"), nodes.values(), OWNER, NONE_GONE)).hasValueSatisfying(refusal ->
                assertThat(refusal).contains("would leave no schedulable Ready worker").contains("w3 (locked by ScaleDown/other)"));
        assertThat(ScaleDownTargets.noWorkerLeft(List.of("w1"), nodes.values(), OWNER, NONE_GONE)).as("w2 stays, held by us only").isEmpty();
    }

    @Test
    void refusesToRemoveTheLastSchedulableReadyWorker() {
        Node cordoned = worker("cordoned", null);
        cordoned.getSpec().setUnschedulable(true);
        Map<String, Node> nodes = nodes(worker("w1", null), worker("w2", null), cordoned, controlPlane("cp1"));

        assertThat(ScaleDownTargets.refusals(List.of("w1", "w2"), nodes, OWNER, NONE_GONE))
                .singleElement().asString().contains("would leave no schedulable Ready worker");
        assertThat(ScaleDownTargets.refusals(List.of("w1"), nodes, OWNER, NONE_GONE)).isEmpty();
    }

    @Test
    void cloudStackRefusalsNameTheNodeWithoutVmAndTheClusterState() throws Exception {
        KubernetesCluster stopped = cluster("Stopped", "CloudManaged");
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1", "w9"), stopped, Removal.CloudStackScale))
                .anySatisfy(r -> assertThat(r).contains("is in state Stopped: CloudStack scales a cluster only when"))
                .anySatisfy(r -> assertThat(r).startsWith("Node w9 has no VM in the VM map"))
                .hasSize(2);
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), cluster("Running", "CloudManaged"), Removal.CloudStackScale)).isEmpty();
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), cluster("Running", "ExternalManaged"), Removal.CloudStackScale))
                .singleElement().asString().contains("use removal: DestroyVM");
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), cluster("Running", "ExternalManaged"), Removal.DestroyVM)).isEmpty();
    }

    @Test
    void aClusterInAlertIsRefusedBecauseCloudStackRefusesToScaleIt() throws Exception {
        // validateKubernetesClusterScaleParameters: only Created, Running and Stopped may be scaled.
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), cluster("Alert", "CloudManaged"), Removal.CloudStackScale))
                .singleElement().asString().contains("is in state Alert").contains("once every VM of its map is Running again");
    }

    @Test
    void aClusterWhoseAutoscalerOwnsTheSizeIsRefused() throws Exception {
        KubernetesCluster autoscaled = cluster("Running", "CloudManaged", "\"autoscalingenabled\":true,\"minsize\":1,\"maxsize\":5,", "");

        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), autoscaled, Removal.CloudStackScale))
                .singleElement().asString().contains("has autoscaling enabled (1 to 5 workers)");
    }

    @Test
    void aClusterWithoutAKnownVersionIsRefused() throws Exception {
        KubernetesCluster versionGone = CloudStackResponses.MAPPER.readValue("""
                {"id":"c1","name":"prod","state":"Running","clustertype":"CloudManaged","size":3,
                 "virtualmachines":[{"id":"vm-1","name":"w1","state":"Running"}]}
                """, KubernetesCluster.class);

        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1"), versionGone, Removal.CloudStackScale))
                .singleElement().asString().contains("Invalid Kubernetes version associated with Kubernetes cluster");
    }

    @Test
    void removingEveryWorkerCloudStackCountsIsRefused() throws Exception {
        // size 3: removing three is refused, two is not.
        KubernetesCluster small = cluster("Running", "CloudManaged", "\"controlnodes\":1,", "");

        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1", "w2", "w1.example"), small, Removal.CloudStackScale))
                .anySatisfy(r -> assertThat(r).contains("Can not remove all nodes from a cluster"));
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("w1", "w2"), small, Removal.CloudStackScale)).isEmpty();
    }

    @Test
    void etcdNodesAreNeverScaledDown() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged", "", """
                ,{"id":"vm-e","name":"prod-etcd-1","state":"Running","isetcdnode":true}""");

        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("prod-etcd-1"), cluster, Removal.CloudStackScale))
                .singleElement().asString().startsWith("Node prod-etcd-1 is named like the dedicated etcd VM");
    }

    private static final String EXTERNAL_ROWS = """
            ,{"id":"vm-x","name":"byo-1","state":"Running","isexternalnode":true},
             {"id":"vm-y","name":"byo-2","state":"Running","isexternalnode":true}""";

    @Test
    void externalNodesGoByRemoveNodesAndCloudStacksOwnByScale() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged", "", EXTERNAL_ROWS);
        List<VirtualMachine> external = cluster.virtualMachines().stream().filter(VirtualMachine::isExternalNode).toList();
        List<VirtualMachine> created = cluster.virtualMachines().stream().filter(vm -> !vm.isExternalNode()).toList();

        assertThat(ScaleDownTargets.removalCommand(Removal.CloudStackScale, external)).contains(RemovalCommand.removeNodesFromKubernetesCluster);
        assertThat(ScaleDownTargets.removalCommand(Removal.CloudStackScale, created)).contains(RemovalCommand.scaleKubernetesCluster);
        assertThat(ScaleDownTargets.removalCommand(Removal.CloudStackScale, cluster.virtualMachines())).as("a mix goes by no one call").isEmpty();
        assertThat(ScaleDownTargets.removalCommand(Removal.DestroyVM, cluster.virtualMachines())).contains(RemovalCommand.destroyVirtualMachine);
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("byo-1", "byo-2"), cluster, Removal.CloudStackScale)).isEmpty();
    }

    @Test
    void externalAndCloudStackCreatedNodesTogetherAreRefusedNamingEachKind() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged", "", EXTERNAL_ROWS);

        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("byo-1", "w1", "byo-2"), cluster, Removal.CloudStackScale)).singleElement().asString()
                .startsWith("Nodes byo-1, byo-2 were added to CloudStack Kubernetes cluster prod (c1) with addNodesToKubernetesCluster")
                .contains("nodes w1 were created by CloudStack")
                .endsWith("Remove them in separate ScaleDowns: one for byo-1, byo-2, one for w1.");
    }

    @Test
    void externalNodesAreRemovedFromARunningClusterOrOneInAlertOnlyWhateverItsAutoscaling() throws Exception {
        String autoscaling = "\"autoscalingenabled\":true,\"minsize\":1,\"maxsize\":5,";
        for (String state : List.of("Running", "Alert")) {
            assertThat(ScaleDownTargets.cloudStackRefusals(List.of("byo-1"), cluster(state, "CloudManaged", autoscaling, EXTERNAL_ROWS),
                    Removal.CloudStackScale)).as(state).isEmpty();
        }
        assertThat(ScaleDownTargets.cloudStackRefusals(List.of("byo-1"), cluster("Stopped", "CloudManaged", "", EXTERNAL_ROWS), Removal.CloudStackScale))
                .singleElement().asString().contains("is in state Stopped: CloudStack removes external nodes only from a Running cluster");
    }

    @Test
    void aNodeIsDownWhenNotReadyOrItsVmIsStopped() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged");
        assertThat(ScaleDownTargets.downReason(worker("w1", null), ScaleDownTargets.vmOf("w1", cluster))).isEmpty();
        assertThat(ScaleDownTargets.downReason(worker("w2", null), ScaleDownTargets.vmOf("w2", cluster))).contains("its VM is stopped");
        Node notReady = worker("w1", null);
        notReady.getStatus().getConditions().get(0).setStatus("False");
        assertThat(ScaleDownTargets.downReason(notReady, Optional.empty())).contains("it is NotReady");
    }

    @Test
    void countCandidatesAreReadySchedulableMappedWorkersNobodyElseLocked() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged");
        assertThat(ScaleDownTargets.isCandidate(worker("w1", null), cluster, OWNER, NONE_GONE)).isTrue();
        assertThat(ScaleDownTargets.isCandidate(worker("w1", "NodeUpgrade/x"), cluster, OWNER, NONE_GONE)).isFalse();
        assertThat(ScaleDownTargets.isCandidate(worker("unmapped", null), cluster, OWNER, NONE_GONE)).isFalse();
        assertThat(ScaleDownTargets.isCandidate(controlPlane("w1"), cluster, OWNER, NONE_GONE)).isFalse();
    }

    @Test
    void aCountNeverPicksAnExternalNode() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged", "", EXTERNAL_ROWS);

        assertThat(ScaleDownTargets.isCandidate(worker("byo-1", null), cluster, OWNER, NONE_GONE)).isFalse();
        assertThat(ScaleDownTargets.isCandidate(worker("w1", null), cluster, OWNER, NONE_GONE)).isTrue();
    }

    @Test
    void workersOfTheClusterHeldByOtherLiveOperationsAreNamedWithTheirHolder() throws Exception {
        KubernetesCluster cluster = cluster("Running", "CloudManaged", "", ",{\"id\":\"vm-3\",\"name\":\"w3\",\"state\":\"Running\"}");
        String gone = "ScaleDown/deleted/uid-0";
        Map<String, Node> nodes = nodes(worker("w1", "ScaleDown/shrink-a/uid-a"), worker("w2", "ScaleDown/shrink-a/uid-a"), worker("w3", gone),
                worker("unmapped", "NodeUpgrade/up/uid-u"), controlPlane("cp1"));

        assertThat(ScaleDownTargets.heldByOthers(nodes.values(), cluster, OWNER, gone::equals)).contains("w1, w2 locked by ScaleDown/shrink-a");
        assertThat(ScaleDownTargets.heldByOthers(nodes.values(), cluster, "ScaleDown/shrink-a/uid-a", gone::equals)).as("our own locks are not others'").isEmpty();
    }

    static KubernetesCluster cluster(String state, String type) throws Exception {
        return cluster(state, type, "", "");
    }

    /** A cluster of 3 workers as listKubernetesClusters returns it, with extra top-level fields and extra VM rows. */
    static KubernetesCluster cluster(String state, String type, String extraFields, String extraRows) throws Exception {
        return CloudStackResponses.MAPPER.readValue("""
                {"id":"c1","name":"prod","state":"%s","clustertype":"%s","kubernetesversionid":"v-1","size":3,%s"virtualmachines":[
                  {"id":"vm-1","name":"w1","state":"Running"},{"id":"vm-2","name":"w2","state":"Stopped"}%s]}
                """.formatted(state, type, extraFields, extraRows), KubernetesCluster.class);
    }

    static Node worker(String name, String lockedBy) {
        return lockedBy == null ? TestNodes.node(name).build() : TestNodes.node(name).lockedBy(lockedBy).build();
    }

    static Node controlPlane(String name) {
        return TestNodes.node(name).controlPlane().build();
    }

    private static Map<String, Node> nodes(Node... nodes) {
        Map<String, Node> byName = new LinkedHashMap<>();
        for (Node node : nodes) {
            byName.put(node.getMetadata().getName(), node);
        }
        return byName;
    }

    @Test
    void eachRemovalNeedsItsOwnCommandsAndOnlyListAsyncJobsIsOptional() {
        assertThat(ScaleDownTargets.cloudStackNeeds(RemovalCommand.scaleKubernetesCluster)).filteredOn(need -> !need.optional())
                .extracting(need -> need.command().apiName())
                .containsExactlyInAnyOrder("listKubernetesClusters", "queryAsyncJobResult", "scaleKubernetesCluster");
        assertThat(ScaleDownTargets.cloudStackNeeds(RemovalCommand.removeNodesFromKubernetesCluster)).filteredOn(need -> !need.optional())
                .extracting(need -> need.command().apiName())
                .containsExactlyInAnyOrder("listKubernetesClusters", "queryAsyncJobResult", "removeNodesFromKubernetesCluster");
        assertThat(ScaleDownTargets.cloudStackNeeds(RemovalCommand.destroyVirtualMachine)).filteredOn(need -> !need.optional())
                .extracting(need -> need.command().apiName()).containsExactlyInAnyOrder("listKubernetesClusters", "queryAsyncJobResult",
                        "removeVirtualMachinesFromKubernetesCluster", "destroyVirtualMachine", "listVirtualMachines");
        assertThat(ScaleDownTargets.cloudStackNeeds(RemovalCommand.scaleKubernetesCluster)).filteredOn(need -> need.optional())
                .extracting(need -> need.command().apiName()).containsExactly("listAsyncJobs");
    }
}
