package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.scaledown.ScaleDownNodeStatus.Phase;
import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/** ScaleDown of a CloudManaged CKS cluster: the packaged operator against the real control plane and the CloudStack simulator. */
class ScaleDownIT extends ScaleDownScenario {
    private static final Duration WITHIN = Duration.ofSeconds(120);

    ScaleDownIT() {
        super("sdc", "CloudManaged");
    }

    /** A worker with two pods of a Deployment whose PDB (minAvailable 2) allows no disruption: its drain is blocked until the PDB goes. */
    @Test
    void removesTwoWorkersCordoningBothBeforeDrainingEitherWithOneScaleCall() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        pool.deployment("web", 4, false);
        pool.awaitReadyPods("web", 4);
        assertThat(pool.podsOn(first).size() + pool.podsOn(second).size()).as("the pods run on the nodes to remove").isEqualTo(4);
        String spare = world.addWorker(pool);

        ScaleDown done;
        try (CordonEvictionOrder order = new CordonEvictionOrder(world, pool.namespace, List.of(first, second))) {
            world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
            done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);
            order.assertEveryNodeCordonedBeforeTheFirstEviction();
        }

        assertThat(ScaleDownBed.condition(done, Conditions.SUCCEEDED).getStatus()).isEqualTo("True");
        assertThat(done.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getPhase).containsOnly(Phase.Removed);
        assertThat(done.getStatus().getProgress()).isEqualTo("2/2");
        List<RecordedCall> scales = world.simulator().calls("scaleKubernetesCluster");
        assertThat(scales).as("exactly one scaleKubernetesCluster call").hasSize(1);
        assertThat(Arrays.asList(scales.get(0).param("nodeids").split(",")))
                .containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(world.simulator().cluster(world.fixture.cluster().id()).vmIds())
                .doesNotContain(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(done.getStatus().getRemoval().getRemovedVmIds()).containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        pool.awaitReadyPods("web", 4);
        assertThat(pool.podsOn(spare)).as("the pods were rescheduled onto the remaining worker").hasSize(4);
        world.assertNodeGone(first);
        world.assertNodeGone(second);
        assertThat(world.metrics())
                .containsPattern("cks_operations_total\\{[^}]*kind=\"ScaleDown\"[^}]*outcome=\"Succeeded\"[^}]*} [1-9]")
                .containsPattern("cks_node_step_seconds_count\\{[^}]*kind=\"ScaleDown\"[^}]*step=\"drain\"[^}]*} (?:[2-9]|[1-9][0-9])");
    }

    /**
     * External nodes (CloudStack 4.21+): a ScaleDown of them drains them as any other and removes them with one
     * removeNodesFromKubernetesCluster, the VMs staying; one naming them together with a CloudStack-created node
     * is refused before anything is cordoned.
     */
    @Test
    void externalNodesAreRemovedWithRemoveNodesKeepingTheirVmsAndAMixIsRefusedBeforeAnyCordon() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        String created = world.addWorker(pool);
        pool.deployment("web", 2, false);
        pool.awaitReadyPods("web", 2);
        world.simulator().setExternalNode(world.fixture.vmId(first), true);
        world.simulator().setExternalNode(world.fixture.vmId(second), true);

        String mixed = name + "-mixed";
        world.create(mixed, List.of(first, created), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown refused = world.awaitPhase(mixed, ScaleDownStatus.Phase.Failed, WITHIN);
        assertThat(ScaleDownBed.condition(refused, Conditions.ACCEPTED).getStatus()).isEqualTo("False");
        assertThat(ScaleDownBed.condition(refused, Conditions.ACCEPTED).getMessage()).contains("Nodes " + first + " were added")
                .contains("nodes " + created + " were created by CloudStack").contains("separate ScaleDowns");
        for (String node : List.of(first, created)) {
            assertThat(world.isUnschedulable(node)).as("%s not cordoned", node).isFalse();
            assertThat(world.operatorAnnotations(node)).as("%s not locked", node).isEmpty();
        }
        assertThat(world.cloudStackWrites()).isEmpty();
        world.delete(mixed);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(done.getStatus().getRemoval().getCommand()).isEqualTo(ScaleDownStatus.RemovalCommand.removeNodesFromKubernetesCluster);
        List<RecordedCall> removes = world.simulator().calls("removeNodesFromKubernetesCluster");
        assertThat(removes).as("exactly one removeNodesFromKubernetesCluster call").hasSize(1);
        assertThat(Arrays.asList(removes.get(0).param("nodeids").split(",")))
                .containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(world.simulator().calls("scaleKubernetesCluster")).isEmpty();
        assertThat(world.simulator().cluster(world.fixture.cluster().id()).vmIds())
                .doesNotContain(world.fixture.vmId(first), world.fixture.vmId(second)).contains(world.fixture.vmId(created));
        assertThat(world.simulator().findVm(world.fixture.vmId(first))).as("the VM stays").isPresent();
        assertThat(world.simulator().findVm(world.fixture.vmId(second))).as("the VM stays").isPresent();
        assertThat(ScaleDownBed.condition(done, Conditions.SUCCEEDED).getMessage()).contains("their VMs stay");
        pool.awaitReadyPods("web", 2);
        assertThat(pool.podsOn(created)).as("the pods moved to the remaining worker").hasSize(2);
        world.assertNodeGone(first);
        world.assertNodeGone(second);
    }

    @Test
    void pdbBlockingTheSecondNodeRollsBackAndLeavesTheNodeCordonedBeforeCordoned() {
        String blocked = workerHeldByABudget();
        String cordonedBefore = world.addWorker(pool);
        pool.cordon(cordonedBefore);
        world.addWorker(pool);

        world.create(name, List.of(cordonedBefore, blocked), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(3, 0));
        ScaleDown rolledBack = world.awaitPhase(name, ScaleDownStatus.Phase.RolledBack, WITHIN);

        String message = ScaleDownBed.condition(rolledBack, Conditions.ROLLED_BACK).getMessage();
        assertThat(message).contains("node " + blocked).contains("pdb " + pool.namespace + "/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed");
        assertThat(ScaleDownBed.condition(rolledBack, dev.cks.nodeops.operation.PreflightGate.CONDITION))
                .as("preflight (Warn) predicted the block and the scale-down went on")
                .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"))
                .satisfies(c -> assertThat(c.getMessage()).contains(pool.namespace + "/web-pdb"));
        assertThat(world.isUnschedulable(blocked)).as("the node this ScaleDown cordoned is schedulable again").isFalse();
        assertThat(world.isUnschedulable(cordonedBefore)).as("the node cordoned before the ScaleDown stays cordoned").isTrue();
        assertThat(world.operatorAnnotations(blocked)).isEmpty();
        assertThat(world.operatorAnnotations(cordonedBefore)).isEmpty();
        assertThat(world.cloudStackWrites()).as("nothing was asked of CloudStack").isEmpty();
        assertThat(rolledBack.getStatus().getNodes()).extracting(ScaleDownNodeStatus::getName, ScaleDownNodeStatus::getPhase)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(cordonedBefore, Phase.Drained), org.assertj.core.groups.Tuple.tuple(blocked, Phase.Failed));
        assertThat(rolledBack.getStatus().getNodes().get(0).getCordonedByUs()).isFalse();
        assertThat(rolledBack.getStatus().getCurrentNode()).as("no node is worked on once the ScaleDown has rolled back").isNull();
    }

    @Test
    void aDrainHeldByAPdbShowsThePdbAndItsNumbersWhileItBlocksAndCarriesOnWhenItIsGone() {
        String held = workerHeldByABudget();
        world.addWorker(pool);

        world.create(name, List.of(held), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(120, 0));
        String numbers = "pdb " + pool.namespace + "/web-pdb: needs 2 healthy, has 2, 0 disruptions allowed";
        ScaleDown blocked = world.await(name, "blocked", sd -> sd.getStatus() != null && sd.getStatus().getMessage() != null
                && sd.getStatus().getMessage().contains("blocked for"), WITHIN);

        assertThat(ScaleDownBed.condition(blocked, Conditions.PROGRESSING).getMessage()).contains("Draining node " + held).contains(numbers);
        Awaitility.await("a DrainBlocked Warning event").atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(world.bed.eventsOf(name))
                .anySatisfy(e -> {
                    assertThat(e.getType()).isEqualTo("Warning");
                    assertThat(e.getReason()).isEqualTo("DrainBlocked");
                    assertThat(e.getMessage()).contains(held).contains(numbers);
                }));
        assertThat(world.metrics().lines()).anyMatch(l -> l.startsWith("cks_drain_blocked{") && l.contains("name=\"" + name + "\"")
                && l.contains("node=\"" + held + "\"") && l.endsWith(" 1.0"));

        world.client.policy().v1().podDisruptionBudget().inNamespace(pool.namespace).withName("web-pdb").delete();
        world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);
        assertThat(world.bed.eventsOf(name)).filteredOn(e -> "DrainBlocked".equals(e.getReason())).as("announced once").hasSize(1);
    }

    @Test
    void deletingTheScaleDownMidDrainUncordonsAndUnlocksItsNodes() {
        String blocked = world.addWorker(pool);
        pool.deployment("web", 1, false);
        pool.budget("web-pdb", "web", 1, null);
        pool.awaitReadyPods("web", 1);
        pool.awaitBudget("web-pdb", 1, 1);
        String cordonedBefore = world.addWorker(pool);
        pool.cordon(cordonedBefore);
        world.addWorker(pool);

        world.create(name, List.of(blocked, cordonedBefore), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(300, 0));
        world.await(name, "draining " + blocked, sd -> sd != null && sd.getStatus() != null
                && blocked.equals(sd.getStatus().getCurrentNode()), WITHIN);
        assertThat(world.operatorAnnotations(blocked)).containsKeys(NodeAnnotations.LOCK, NodeAnnotations.CORDONED_BY);

        world.delete(name);

        assertThat(world.isUnschedulable(blocked)).as("the node the ScaleDown cordoned is schedulable again").isFalse();
        assertThat(world.isUnschedulable(cordonedBefore)).as("the node cordoned before stays cordoned").isTrue();
        assertThat(world.operatorAnnotations(blocked)).isEmpty();
        assertThat(world.operatorAnnotations(cordonedBefore)).isEmpty();
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    /**
     * A pod the drain's filters refuse (emptyDir, deleteEmptyDirData false) fails the node at its first look, in the
     * reconcile that made it the current node and wrote the rollback before giving anything back: once RolledBack,
     * no node is shown as worked on (that reconcile's end cleared it, and the write before did not keep it).
     */
    @Test
    void aPodTheDrainRefusesRollsBackAtTheFirstLookAndLeavesNoCurrentNode() {
        String node = world.addWorker(pool);
        pool.deployment("scratch", 1, true);
        pool.awaitReadyPods("scratch", 1);
        world.addWorker(pool);
        DrainOptions keepLocalData = ScaleDownBed.drain(30, 0);
        keepLocalData.setDeleteEmptyDirData(false);

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, keepLocalData);
        ScaleDown rolledBack = world.awaitPhase(name, ScaleDownStatus.Phase.RolledBack, WITHIN);

        assertThat(ScaleDownBed.condition(rolledBack, Conditions.ROLLED_BACK).getMessage()).contains("node " + node).contains("local storage");
        assertThat(rolledBack.getStatus().getCurrentNode()).as("no node is worked on once the ScaleDown has rolled back").isNull();
        assertThat(world.isUnschedulable(node)).isFalse();
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    @Test
    void deadlinePassingWhileDrainingRollsBack() {
        String node = world.addWorker(pool);
        pool.deployment("web", 1, false);
        pool.budget("web-pdb", "web", 1, null);
        pool.awaitReadyPods("web", 1);
        pool.awaitBudget("web-pdb", 1, 1);
        world.addWorker(pool);

        // One long attempt: only the operation's deadline can end it.
        world.create(name, List.of(node), null, Removal.CloudStackScale, 8, ScaleDownBed.drain(300, 0));
        ScaleDown rolledBack = world.awaitPhase(name, ScaleDownStatus.Phase.RolledBack, WITHIN);

        assertThat(ScaleDownBed.condition(rolledBack, Conditions.ROLLED_BACK).getMessage()).contains("node " + node).contains("deadline");
        assertThat(Timestamps.parse(rolledBack.getStatus().getCompletedAt())).isAfterOrEqualTo(Timestamps.parse(rolledBack.getStatus().getDeadline()));
        assertThat(world.isUnschedulable(node)).isFalse();
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    @Test
    void deadlinePassingDuringRemovalLetsTheRemovalFinish() {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().planJob("scaleKubernetesCluster", new JobOutcome.SucceedsAfter(Duration.ofSeconds(12)));

        world.create(name, List.of(node), null, Removal.CloudStackScale, 5, ScaleDownBed.drain(30, 0));
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        assertThat(Timestamps.parse(done.getStatus().getCompletedAt())).as("finished past the deadline")
                .isAfter(Timestamps.parse(done.getStatus().getDeadline()));
        assertThat(world.simulator().calls("scaleKubernetesCluster")).hasSize(1);
        assertThat(world.simulator().cluster(world.fixture.cluster().id()).vmIds()).doesNotContain(world.fixture.vmId(node));
    }

    @Test
    void failedCloudStackJobMarksFailedAndUncordonsTheNodesStillThere() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().planJob("scaleKubernetesCluster", JobOutcome.fails(530, "Failed to scale Kubernetes cluster: VM destroy failed"));

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown failed = world.awaitPhase(name, ScaleDownStatus.Phase.Failed, WITHIN);

        assertThat(ScaleDownBed.condition(failed, Conditions.FAILED).getMessage()).contains("VM destroy failed");
        assertThat(failed.getStatus().getRemoval().getRemainingVmIds()).containsExactlyInAnyOrder(world.fixture.vmId(first), world.fixture.vmId(second));
        assertThat(failed.getStatus().getRemoval().getRemovedVmIds()).isEmpty();
        assertThat(world.isUnschedulable(first)).isFalse();
        assertThat(world.isUnschedulable(second)).isFalse();
        assertThat(world.operatorAnnotations(first)).isEmpty();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).hasSize(1);
    }

    @Test
    void refusesControlPlaneUnknownLockedAndUnmappedNodesTouchingNothing() {
        String locked = world.addWorker(pool);
        world.client.nodes().withName(locked).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"annotations\":{\"" + NodeAnnotations.LOCK + "\":\"NodeUpgrade/to-1-36\"}}}");
        String unmapped = pool.addWorker(world.prefix);
        String free = world.addWorker(pool);
        Map<String, String> cases = Map.of(
                world.controlPlane, "is a control-plane node",
                world.prefix + "-node-ffffffffff", "does not exist",
                locked, "is locked by NodeUpgrade/to-1-36",
                unmapped, "has no VM in the VM map");

        cases.forEach((node, why) -> {
            String refused = name + "-" + Math.abs(node.hashCode() % 10000);
            world.create(refused, List.of(node, free), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
            ScaleDown result = world.awaitPhase(refused, ScaleDownStatus.Phase.Failed, WITHIN);
            assertThat(ScaleDownBed.condition(result, Conditions.ACCEPTED).getStatus()).isEqualTo("False");
            assertThat(ScaleDownBed.condition(result, Conditions.ACCEPTED).getMessage()).contains("Node " + node + " " + why);
            world.delete(refused);
        });

        for (String node : List.of(locked, unmapped, free, world.controlPlane)) {
            assertThat(world.isUnschedulable(node)).as("%s untouched", node).isFalse();
            assertThat(world.operatorAnnotations(node).keySet()).as("%s untouched", node)
                    .isEqualTo(node.equals(locked) ? java.util.Set.of(NodeAnnotations.LOCK) : java.util.Set.of());
        }
        assertThat(world.operatorAnnotations(locked)).containsEntry(NodeAnnotations.LOCK, "NodeUpgrade/to-1-36");
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    @Test
    void refusesAClusterInAlertOrWithAutoscalingBeforeCordoningAnything() {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        String clusterId = world.fixture.cluster().id();
        Map<String, Runnable> cases = new java.util.LinkedHashMap<>();
        // CloudStack scales no cluster in Alert (KubernetesClusterManagerImpl.validateKubernetesClusterScaleParameters).
        cases.put("is in state Alert", () -> world.simulator().setClusterState(clusterId, "Alert"));
        // CloudStack would scale one with autoscaling on, but its autoscaler owns the size.
        cases.put("has autoscaling enabled (1 to 5 workers)", () -> {
            world.simulator().setClusterState(clusterId, "Running");
            world.simulator().setAutoscaling(clusterId, true, 1L, 5L);
        });
        try {
            cases.forEach((why, setUp) -> {
                setUp.run();
                String refused = name + "-" + Math.abs(why.hashCode() % 10000);
                world.create(refused, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
                ScaleDown result = world.awaitPhase(refused, ScaleDownStatus.Phase.Failed, WITHIN);
                assertThat(ScaleDownBed.condition(result, Conditions.ACCEPTED).getStatus()).isEqualTo("False");
                assertThat(ScaleDownBed.condition(result, Conditions.ACCEPTED).getMessage()).contains(why);
                assertThat(world.isUnschedulable(node)).as("not cordoned when %s", why).isFalse();
                assertThat(world.operatorAnnotations(node)).as("not locked when %s", why).isEmpty();
                world.delete(refused);
            });
        } finally {
            world.simulator().setAutoscaling(clusterId, false, null, null);
        }
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    @Test
    void preflightFailRefusesABlockedDrainBeforeCordoningAnything() {
        String node = world.addWorker(pool);
        pool.deployment("web", 1, false);
        pool.budget("web-pdb", "web", 1, null);
        pool.awaitReadyPods("web", 1);
        pool.awaitBudget("web-pdb", 1, 1);
        world.addWorker(pool);

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0), Preflight.Fail);
        ScaleDown refused = world.awaitPhase(name, ScaleDownStatus.Phase.Failed, WITHIN);

        assertThat(ScaleDownBed.condition(refused, Conditions.ACCEPTED).getStatus()).isEqualTo("False");
        assertThat(ScaleDownBed.condition(refused, Conditions.ACCEPTED).getMessage()).contains(pool.namespace + "/web-pdb").contains("Nothing was cordoned");
        assertThat(world.isUnschedulable(node)).isFalse();
        assertThat(world.operatorAnnotations(node)).isEmpty();
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    /**
     * The case a new user runs into: two replicas pinned to the two workers being removed, a budget that
     * allows one disruption. The arithmetic alone says "slowed"; the replacement of the first pod evicted
     * could never be scheduled, so the second could never go. Preflight Fail refuses before any cordon.
     */
    @Test
    void aDeploymentPinnedToTheNodesBeingRemovedIsRefusedByPreflightBeforeAnyCordon() {
        String first = world.addWorker(pool);
        String second = world.addWorker(pool);
        world.addWorker(pool);
        pool.pinnedDeployment("pinned", 2, List.of(first, second));
        pool.budget("pinned-pdb", "pinned", 1, null);
        pool.awaitReadyPods("pinned", 2);
        pool.awaitBudget("pinned-pdb", 2, 2);

        world.create(name, List.of(first, second), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0), Preflight.Fail);
        ScaleDown refused = world.awaitPhase(name, ScaleDownStatus.Phase.Failed, WITHIN);

        String message = ScaleDownBed.condition(refused, Conditions.ACCEPTED).getMessage();
        assertThat(ScaleDownBed.condition(refused, Conditions.ACCEPTED).getReason()).isEqualTo("Refused");
        assertThat(message).contains("pdb " + pool.namespace + "/pinned-pdb: needs 1 healthy, has 2, 1 disruption allowed")
                .contains("no replacement of Deployment " + pool.namespace + "/pinned can be scheduled")
                .contains("2 node(s) are being drained").contains("didn't match Pod's node affinity/selector")
                .contains("Nothing was cordoned");
        assertThat(world.bed.eventsOf(name)).extracting(io.fabric8.kubernetes.api.model.Event::getReason).doesNotContain("Cordoned", "Draining");
        for (String node : List.of(first, second)) {
            assertThat(world.isUnschedulable(node)).isFalse();
            assertThat(world.operatorAnnotations(node)).isEmpty();
        }
        assertThat(pool.podsOn(first).size() + pool.podsOn(second).size()).as("no pod was evicted").isEqualTo(2);
        assertThat(world.cloudStackWrites()).isEmpty();
    }

    @Test
    void waitsWhileCloudStackScalesTheClusterThenCarriesOn() {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        world.simulator().setClusterState(world.fixture.cluster().id(), "Scaling");

        world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown waiting = world.awaitPhase(name, ScaleDownStatus.Phase.Waiting, WITHIN);
        assertThat(ScaleDownBed.condition(waiting, Conditions.WAITING).getMessage()).contains("is Scaling");
        assertThat(world.isUnschedulable(node)).as("nothing is cordoned while CloudStack is busy").isFalse();

        world.simulator().setClusterState(world.fixture.cluster().id(), "Running");
        world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);
    }

    @Test
    void aNodeWhoseVmIsStoppedIsNeitherCordonedNorDrainedButRemoved() {
        String down = world.addWorker(pool);
        pool.deployment("web", 1, false);
        pool.awaitReadyPods("web", 1);
        world.addWorker(pool);
        world.simulator().setVmState(world.fixture.vmId(down), "Stopped");

        world.create(name, List.of(down), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(30, 0));
        ScaleDown done = world.awaitPhase(name, ScaleDownStatus.Phase.Succeeded, WITHIN);

        ScaleDownNodeStatus status = done.getStatus().getNodes().get(0);
        assertThat(status.getDownReason()).isEqualTo("its VM is stopped");
        assertThat(status.getCordonedAt()).as("never cordoned").isNull();
        assertThat(status.getDrain()).as("never drained").isNull();
        assertThat(world.simulator().calls("scaleKubernetesCluster")).singleElement()
                .satisfies(call -> assertThat(call.param("nodeids")).isEqualTo(world.fixture.vmId(down)));
    }

    /**
     * Proves the order from the API server's own sequence: resourceVersions are etcd revisions, so the
     * revision at which each node became unschedulable can be compared with the one of the first eviction.
     */
    static final class CordonEvictionOrder implements AutoCloseable {
        private final Map<String, Long> cordonRevision = new ConcurrentHashMap<>();
        private final ConcurrentSkipListSet<Long> evictionRevisions = new ConcurrentSkipListSet<>();
        private final List<String> nodes;
        private final Watch nodeWatch;
        private final Watch podWatch;

        CordonEvictionOrder(ScaleDownBed world, String namespace, List<String> nodes) {
            this.nodes = nodes;
            this.nodeWatch = world.client.nodes().watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Node node) {
                    if (nodes.contains(node.getMetadata().getName()) && NodeReadiness.isUnschedulable(node)) {
                        cordonRevision.putIfAbsent(node.getMetadata().getName(), Long.parseLong(node.getMetadata().getResourceVersion()));
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
            this.podWatch = world.client.pods().inNamespace(namespace).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Pod pod) {
                    if (pod.getMetadata().getDeletionTimestamp() != null && nodes.contains(pod.getSpec().getNodeName())) {
                        evictionRevisions.add(Long.parseLong(pod.getMetadata().getResourceVersion()));
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
        }

        void assertEveryNodeCordonedBeforeTheFirstEviction() {
            assertThat(cordonRevision.keySet()).as("every node was seen cordoned").containsExactlyInAnyOrderElementsOf(nodes);
            assertThat(evictionRevisions).as("pods were evicted").isNotEmpty();
            long lastCordon = cordonRevision.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            assertThat(lastCordon).as("the last cordon (revision %s) comes before the first eviction (revision %s); cordons %s",
                    lastCordon, evictionRevisions.first(), cordonRevision).isLessThan(evictionRevisions.first());
        }

        @Override
        public void close() {
            nodeWatch.close();
            podWatch.close();
        }
    }
}
