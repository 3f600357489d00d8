package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.drain.DrainResult.Outcome;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/** The drain engine against a real API server, controller-manager and scheduler, with KWOK kubelets. */
@ExtendWith(TestBedExtension.class)
class DrainIT {
    private DrainBed bed;

    @BeforeEach
    void setUp(TestBed testBed) {
        bed = new DrainBed(testBed, "drain");
    }

    @AfterEach
    void tearDown() {
        bed.cleanUp();
    }

    @Test
    void drainsTwentyPodsOfThreeDeploymentsAndLeavesDaemonSetPods() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 8, false);
        bed.deployment("api", 7, true);
        bed.deployment("jobs", 5, false);
        bed.daemonSet("agent");
        bed.awaitReadyPods("web", 8);
        bed.awaitReadyPods("api", 7);
        bed.awaitReadyPods("jobs", 5);
        bed.awaitReadyPods("agent", 1);
        String spare = bed.addWorker();
        bed.cordon(source);

        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, DrainBed.options(), new DrainState(), null, Duration.ofSeconds(90));

        assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
        assertThat(result.state().getPodsEvicted()).isEqualTo(20);
        assertThat(result.state().getPodsSeen()).as("only pods still on the node are remembered").isEmpty();
        assertThat(result.state().getLastEvicted()).hasSize(DrainState.LAST_NAMES);
        List<Pod> left = bed.podsOn(source);
        assertThat(left).as("only the DaemonSet pod stays on the drained node")
                .allMatch(p -> p.getMetadata().getLabels().get("app").equals("agent")).hasSize(1);
        bed.awaitReadyPods("web", 8);
        bed.awaitReadyPods("api", 7);
        bed.awaitReadyPods("jobs", 5);
        assertThat(bed.podsOn(spare).stream().map(p -> p.getMetadata().getLabels().get("app")).collect(Collectors.groupingBy(a -> a, Collectors.counting())))
                .as("the replacements run on the other node").containsEntry("web", 8L).containsEntry("api", 7L).containsEntry("jobs", 5L);
    }

    /**
     * The operator's own pod (the leader's, OwnPod) stays while anything else has to leave its node, and goes last:
     * the leader keeps leading the drain of its own node to its end.
     */
    @Test
    void theOperatorsOwnPodLeavesItsNodeLast() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.deployment("operator", 1, false);
        bed.awaitReadyPods("web", 2);
        bed.awaitReadyPods("operator", 1);
        bed.addWorker();
        bed.cordon(source);
        Pod own = bed.podsOn(source).stream().filter(p -> "operator".equals(p.getMetadata().getLabels().get("app"))).findFirst().orElseThrow();
        NodeDrainer drainer = new NodeDrainer(bed.client, EvictionListener.NONE, null, new OwnPod(bed.namespace, own.getMetadata().getName()));

        DrainResult first = drainer.step(source, DrainBed.options(), new DrainState(), null, Instant.now());

        assertThat(first.report()).contains(bed.namespace + "/" + own.getMetadata().getName() + " (the operator's own pod, evicted last)");
        assertThat(first.state().getPodsSeen()).as("the other pods went").hasSize(2);
        assertThat(bed.client.pods().inNamespace(bed.namespace).withName(own.getMetadata().getName()).get().getMetadata().getDeletionTimestamp())
                .as("the own pod stays while the others leave").isNull();
        DrainResult result = DrainBed.drainToEnd(drainer, source, DrainBed.options(), first.state(), null, Duration.ofSeconds(60));
        assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
        assertThat(result.state().getPodsEvicted()).as("then the own pod: three evicted in all").isEqualTo(3);
        assertThat(result.state().getPodsSeen()).as("a done drain remembers no pod").isEmpty();
        assertThat(bed.podsOn(source)).isEmpty();
    }

    @Test
    void pdbWithNoDisruptionAllowedBlocksAfterAllAttemptsAndNamesTheBudget() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 3, false);
        bed.deployment("cache", 2, false);
        bed.budget("web-pdb", "web", 3, null);
        bed.awaitReadyPods("web", 3);
        bed.awaitReadyPods("cache", 2);
        bed.awaitBudget("web-pdb", 3, 3);
        Set<String> webUids = uids(bed.podsOn(source), "web");
        bed.addWorker();
        bed.cordon(source);
        DrainOptions options = DrainBed.options();
        options.setTimeoutSeconds(5);
        options.setRetries(1);
        options.setRetryIntervalSeconds(1);

        Instant started = Instant.now();
        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, options, new DrainState(), null, Duration.ofSeconds(60));

        assertThat(result.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(result.state().getAttempt()).isEqualTo(2);
        assertThat(Duration.between(started, Instant.now())).as("two attempts of 5 s with 1 s between").isBetween(Duration.ofSeconds(10), Duration.ofSeconds(30));
        assertThat(result.report())
                .contains("pdb " + bed.namespace + "/web-pdb: needs 3 healthy, has 3, 0 disruptions allowed")
                .contains(bed.namespace + "/web-")
                .contains("all 2 attempt(s)")
                .contains("Cannot evict pod as it would violate the pod's disruption budget");
        assertThat(uids(bed.podsOn(source), "web")).as("the budget allowed no disruption, so no web pod was removed").isEqualTo(webUids);
        assertThat(bed.podsOn(source)).as("the unprotected pods were evicted").noneMatch(p -> "cache".equals(p.getMetadata().getLabels().get("app")));
        assertThat(result.state().getPodsEvicted()).isEqualTo(2);
        assertThat(result.state().getLastEvicted()).hasSize(2).allMatch(k -> k.startsWith(bed.namespace + "/cache-"));
    }

    @Test
    void pdbAllowingOneDisruptionCompletesAsReplacementsBecomeReady() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 4, false);
        bed.budget("web-pdb", "web", null, "1");
        bed.awaitReadyPods("web", 4);
        bed.awaitBudget("web-pdb", 4, 4);
        String spare = bed.addWorker();
        bed.cordon(source);

        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, DrainBed.options(), new DrainState(), null, Duration.ofSeconds(90));

        assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
        assertThat(bed.podsOn(source)).isEmpty();
        bed.awaitReadyPods("web", 4);
        assertThat(bed.podsOn(spare)).hasSize(4);
    }

    @Test
    void sendsOnlyTheEvictionsTheBudgetAllowsAndLooksAgainWithinASecond() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 6, false);
        bed.deployment("cache", 3, false);
        bed.budget("web-pdb", "web", null, "1");
        bed.awaitReadyPods("web", 6);
        bed.awaitReadyPods("cache", 3);
        bed.awaitBudget("web-pdb", 6, 6);
        bed.addWorker();
        bed.cordon(source);
        AtomicInteger webEvictions = new AtomicInteger();
        AtomicInteger cacheEvictions = new AtomicInteger();
        try (KubernetesClient counting = bed.observedClient(request -> {
            String path = request.uri().getPath();
            if (path.endsWith("/eviction")) {
                (path.contains("/pods/web-") ? webEvictions : cacheEvictions).incrementAndGet();
            }
        })) {
            NodeDrainer drainer = new NodeDrainer(counting);

            DrainResult first = drainer.step(source, DrainBed.options(), new DrainState(), null, Instant.now());

            assertThat(cacheEvictions.get()).as("pods no budget covers go at once").isEqualTo(3);
            assertThat(webEvictions.get()).as("maxUnavailable 1: one web eviction in the first round").isEqualTo(1);
            assertThat(first.report()).contains("pdb " + bed.namespace + "/web-pdb: needs 5 healthy, has 6, 0 disruptions allowed");
            assertThat(Duration.between(Instant.now(), first.nextCheckAt())).as("replacements raise the budget soon: look again within a second")
                    .isLessThanOrEqualTo(NodeDrainer.RECHECK_DISRUPTION_BUDGETS);

            DrainResult result = DrainBed.drainToEnd(drainer, source, DrainBed.options(), first.state(), null, Duration.ofSeconds(90));

            assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
            // The drain reads the budget's status before each round; a 429 can still come when a round
            // reads it just before the disruption controller catches up, hence the small margin.
            assertThat(webEvictions.get()).as("web eviction POSTs for 6 pods").isBetween(6, 8);
        }
        assertThat(bed.podsOn(source)).isEmpty();
    }

    /**
     * With watches, steps read the node's pods and the budgets from them: the drain moves when a pod leaves
     * or the budget allows more (not on a timer), sends no eviction the budget refuses although the watch
     * lags the server, declares the node drained only after a real list, and stops its watches at the end.
     */
    @Test
    void aWatchedDrainMovesOnWakeUpsWithoutARefusedEvictionAndStopsItsWatches() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 6, false);
        bed.deployment("cache", 3, false);
        bed.budget("web-pdb", "web", null, "2");
        bed.awaitReadyPods("web", 6);
        bed.awaitReadyPods("cache", 3);
        bed.awaitBudget("web-pdb", 6, 6);
        bed.addWorker();
        bed.cordon(source);
        SentRequests sent = new SentRequests(path -> path.equals("/api/v1/pods"));
        AtomicInteger evictions = sent.evictions;
        AtomicInteger podLists = sent.lists;
        List<String> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (KubernetesClient counting = bed.observedClient(sent::seen)) {
            DrainWatches watches = new DrainWatches(counting);
            NodeDrainer drainer = new NodeDrainer(counting, answers::add, watches);
            WokenSteps steps = new WokenSteps();

            DrainResult result = steps.toEnd(drainer, source, DrainBed.options(), new DrainState(), Duration.ofSeconds(90));

            assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
            assertThat(bed.podsOn(source)).isEmpty();
            assertThat(answers).as("every eviction accepted: none sent that the budget had already spent").containsOnly("evicted")
                    .hasSize(9);
            assertThat(evictions.get()).isEqualTo(9);
            assertThat(steps.wokenBy.get()).as("pods leaving and the budget loosening woke the drain").isPositive();
            // One list to start the pods' watch, one to confirm the node is drained; a watch that has to
            // start over (its resourceVersion expired) lists once more. Listing on every step would take one per step.
            assertThat(podLists.get()).as("pod lists in %d steps", steps.steps.get()).isBetween(2, 3);
            assertThat(watches.watching()).as("the drain's watches stop when it ends").isEmpty();
        }
    }

    /**
     * Two nodes drained side by side (as a NodeUpgrade with maxUnavailable 2 steps them, one after the other in
     * each reconcile) with one budget over pods on both: an eviction one drain spent counts for the other's
     * next round although the budget's watch does not show it yet, so neither sends an eviction the server
     * refuses, and both finish.
     */
    @Test
    void twoDrainsUnderOneBudgetSendNoEvictionItRefuses() throws Exception {
        String first = bed.addWorker();
        String second = bed.addWorker();
        bed.deployment("web", 6, false);
        bed.budget("web-pdb", "web", null, "1");
        bed.awaitReadyPods("web", 6);
        bed.awaitBudget("web-pdb", 6, 6);
        assertThat(bed.podsOn(first)).as("the scheduler put web pods on both nodes").isNotEmpty();
        assertThat(bed.podsOn(second)).as("the scheduler put web pods on both nodes").isNotEmpty();
        bed.addWorker();
        bed.cordon(first);
        bed.cordon(second);
        SentRequests sent = new SentRequests(path -> path.endsWith("/poddisruptionbudgets"));
        AtomicInteger evictions = sent.evictions;
        AtomicInteger budgetLists = sent.lists;
        List<String> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (KubernetesClient counting = bed.observedClient(sent::seen); DrainWatches watches = new DrainWatches(counting)) {
            NodeDrainer drainer = new NodeDrainer(counting, answers::add, watches);
            java.util.concurrent.Semaphore wakes = new java.util.concurrent.Semaphore(0);
            Map<String, DrainResult> results = new java.util.LinkedHashMap<>();
            Instant giveUp = Instant.now().plusSeconds(120);
            for (String node : List.of(first, second)) {
                results.put(node, drainer.step(node, DrainBed.options(), new DrainState(), null, Instant.now(), wakes::release));
            }
            while (!results.values().stream().allMatch(DrainResult::finished)) {
                assertThat(Instant.now()).as("both drains finish; last reports: %s", results).isBefore(giveUp);
                Instant next = results.values().stream().filter(r -> !r.finished()).map(DrainResult::nextCheckAt).min(Instant::compareTo).orElseThrow();
                if (wakes.tryAcquire(Math.max(0, Duration.between(Instant.now(), next).toMillis()), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    wakes.drainPermits();
                }
                // As one reconcile steps every node in progress: each in turn, on one thread.
                for (String node : List.of(first, second)) {
                    DrainResult last = results.get(node);
                    if (!last.finished()) {
                        results.put(node, drainer.step(node, DrainBed.options(), last.state(), null, Instant.now(), wakes::release));
                    }
                }
                if (!results.values().stream().allMatch(DrainResult::finished)) {
                    assertThat(watches.budgetWatches()).as("the drains share one watch of the namespace's budgets").containsExactly(bed.namespace);
                }
            }

            assertThat(results.values()).allSatisfy(r -> assertThat(r.outcome()).as(r.report()).isEqualTo(Outcome.DONE));
            assertThat(answers).as("every eviction accepted: neither drain sent one the other had already spent the budget for")
                    .containsOnly("evicted").hasSize(6);
            assertThat(evictions.get()).isEqualTo(6);
            // One list starts the shared watch (one more if it had to start over); a watch per drain would list twice.
            assertThat(budgetLists.get()).as("lists of the budgets").isEqualTo(1);
            assertThat(watches.watching()).isEmpty();
            assertThat(watches.budgetWatches()).as("the budget watch stops with the last drain that read it").isEmpty();
        }
        assertThat(bed.podsOn(first)).isEmpty();
        assertThat(bed.podsOn(second)).isEmpty();
    }

    @Test
    void disableEvictionDeletesThroughABudgetThatAllowsNothing() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.budget("web-pdb", "web", 2, null);
        bed.awaitReadyPods("web", 2);
        bed.awaitBudget("web-pdb", 2, 2);
        bed.addWorker();
        bed.cordon(source);
        DrainOptions options = DrainBed.options();
        options.setDisableEviction(true);

        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, options, new DrainState(), null, Duration.ofSeconds(60));

        assertThat(result.outcome()).as("plain deletes bypass PodDisruptionBudgets: " + result.report()).isEqualTo(Outcome.DONE);
        assertThat(bed.podsOn(source)).isEmpty();
    }

    @Test
    void unmanagedPodIsRefusedBeforeAnyEvictionWithoutForceAndEvictedWithIt() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.awaitReadyPods("web", 2);
        bed.barePod("solo", source, List.of());
        bed.awaitReadyPods("solo", 1);
        Set<String> before = uids(bed.podsOn(source), null);
        bed.addWorker();
        bed.cordon(source);
        NodeDrainer drainer = new NodeDrainer(bed.client);

        DrainResult refused = drainer.step(source, DrainBed.options(), new DrainState(), null, Instant.now());

        assertThat(refused.outcome()).isEqualTo(Outcome.FAILED);
        assertThat(refused.report()).contains("cannot delete pods that no controller manages")
                .contains("(use force: true): " + bed.namespace + "/solo");
        assertThat(uids(bed.podsOn(source), null)).as("nothing was evicted").isEqualTo(before);
        assertThat(bed.podsOn(source)).allMatch(p -> p.getMetadata().getDeletionTimestamp() == null);

        DrainOptions force = DrainBed.options();
        force.setForce(true);
        DrainResult forced = DrainBed.drainToEnd(drainer, source, force, new DrainState(), null, Duration.ofSeconds(60));

        assertThat(forced.outcome()).as(forced.report()).isEqualTo(Outcome.DONE);
        assertThat(bed.client.pods().inNamespace(bed.namespace).withName("solo").get()).as("the bare pod is gone for good").isNull();
    }

    @Test
    void podStuckTerminatingBlocksUntilSkipWaitForDeleteTimeoutLetsTheDrainGoOn() throws Exception {
        String source = bed.addWorker();
        // KWOK removes deleted pods itself, but it does not remove finalizers: this one keeps the pod Terminating.
        bed.barePod("stuck", source, List.of("drain-test.nodeops.cks.dev/hold"));
        bed.awaitReadyPods("stuck", 1);
        bed.cordon(source);
        DrainOptions options = DrainBed.options();
        options.setForce(true);
        options.setTimeoutSeconds(4);
        NodeDrainer drainer = new NodeDrainer(bed.client);
        try {
            DrainResult waited = DrainBed.drainToEnd(drainer, source, options, new DrainState(), null, Duration.ofSeconds(30));

            assertThat(waited.outcome()).isEqualTo(Outcome.BLOCKED);
            assertThat(waited.report()).contains("terminating (use skipWaitForDeleteTimeoutSeconds to stop waiting for them): " + bed.namespace + "/stuck")
                    .contains("finalizers drain-test.nodeops.cks.dev/hold");

            options.setSkipWaitForDeleteTimeoutSeconds(2);
            options.setTimeoutSeconds(30);
            DrainResult skipped = DrainBed.drainToEnd(drainer, source, options, new DrainState(), null, Duration.ofSeconds(30));

            assertThat(skipped.outcome()).as(skipped.report()).isEqualTo(Outcome.DONE);
            assertThat(bed.client.pods().inNamespace(bed.namespace).withName("stuck").get().getMetadata().getDeletionTimestamp())
                    .as("the pod is still there, terminating; the drain just does not wait for it").isNotNull();
        } finally {
            bed.client.pods().inNamespace(bed.namespace).withName("stuck").patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
        }
    }

    @Test
    void deadlineShorterThanTheAttemptTimeoutCutsTheAttempt() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.budget("web-pdb", "web", 2, null);
        bed.awaitReadyPods("web", 2);
        bed.awaitBudget("web-pdb", 2, 2);
        bed.cordon(source);
        DrainOptions options = DrainBed.options();
        options.setTimeoutSeconds(300);
        options.setRetries(2);
        Instant started = Instant.now();
        Instant deadline = started.plusSeconds(4);

        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, options, new DrainState(), deadline, Duration.ofSeconds(30));

        assertThat(result.outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(Duration.between(started, Instant.now())).as("cut at the 4 s deadline, not after 300 s").isLessThan(Duration.ofSeconds(15));
        assertThat(result.report()).contains("deadline").contains("pdb " + bed.namespace + "/web-pdb");
        assertThat(result.state().getAttempt()).as("no second attempt without time left").isEqualTo(1);
    }

    /**
     * The escalation ladder's DeletePods, as the kit takes it (a drain tick of the node, then the deletions):
     * after the drain has been blocked for its afterSeconds, exactly the held pods its selector opts in are
     * deleted through their budget; a pod held by another budget, not opted in, is not touched.
     */
    @Test
    void theLaddersDeletePodsDeletesOnlyTheOptedInPodsTheBudgetsHold() throws Exception {
        String node = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.deployment("db", 1, false);
        bed.budget("web-pdb", "web", 2, null);
        bed.budget("db-pdb", "db", 1, null);
        bed.awaitReadyPods("web", 2);
        bed.awaitReadyPods("db", 1);
        bed.awaitBudget("web-pdb", 2, 2);
        bed.awaitBudget("db-pdb", 1, 1);
        bed.cordon(node);
        Set<String> web = uids(bed.podsOn(node), "web");
        Set<String> db = uids(bed.podsOn(node), "db");
        DrainOptions options = DrainBed.options();
        options.setTimeoutSeconds(120);
        EscalationStep delete = new EscalationStep();
        delete.setAfterSeconds(10);
        delete.setAction(EscalationStep.Action.DeletePods);
        delete.setSelector(new io.fabric8.kubernetes.api.model.LabelSelectorBuilder().addToMatchLabels("app", "web").build());
        delete.setGracePeriodSeconds(0);
        options.setEscalation(List.of(delete));
        dev.cks.nodeops.operation.NodeWork work = dev.cks.nodeops.operation.KubernetesNodeWork.readingFromApi(bed.client, DrainClient.from(bed.client), EvictionListener.NONE, OwnPod.NONE);
        dev.cks.nodeops.scaledown.ScaleDownNodeStatus progress = new dev.cks.nodeops.scaledown.ScaleDownNodeStatus();
        progress.setName(node);
        progress.setDrain(new DrainState());

        Instant started = Instant.now();
        Awaitility.await("the ladder deletes the web pods").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
            work.drainTick(progress, "ScaleDown/ladder/uid-1", options, null, Instant.now());
            return progress.getDrain().getEscalation().stream().anyMatch(r -> r.getResult() != null && r.getAction() == EscalationStep.Action.DeletePods);
        });

        EscalationRecord taken = progress.getDrain().getEscalation().get(0);
        assertThat(Duration.between(started, Instant.parse(taken.getAt()))).as("after 10 s blocked").isGreaterThanOrEqualTo(Duration.ofSeconds(9));
        assertThat(taken.getCause()).isEqualTo(bed.namespace + "/db-pdb, " + bed.namespace + "/web-pdb");
        assertThat(taken.getResult()).contains("deleted").doesNotContain("/db-");
        Awaitility.await("the web pods are gone").atMost(Duration.ofSeconds(30))
                .until(() -> bed.podsOn(node).stream().noneMatch(p -> web.contains(p.getMetadata().getUid())));
        assertThat(bed.podsOn(node)).as("the db pod, not opted in, stays untouched")
                .filteredOn(p -> db.contains(p.getMetadata().getUid())).singleElement()
                .satisfies(p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNull());
        work.stopDrainWatches();
    }

    /**
     * Cluster shape: two KWOK workers of this test's pool; on the first, Deployments web (2 pods) and api (2), and a bare pod
     * debug. Actor: a person whose spec.drain.selector (#35) picks the pods to drain with matchExpressions, the Deployments'
     * web pods only: app In (web, debug) and pod-template-hash Exists (which Deployment pods have and the bare pod has not).
     * The drain evicts exactly those; the api pods and the bare pod stay untouched, and the bare pod, not selected, needs no force.
     */
    @Test
    void aSelectorsMatchExpressionsDrainExactlyThePodsTheyMatch() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 2, false);
        bed.deployment("api", 2, false);
        bed.barePod("debug", source, List.of());
        bed.awaitReadyPods("web", 2);
        bed.awaitReadyPods("api", 2);
        bed.awaitReadyPods("debug", 1);
        Set<String> web = uids(bed.podsOn(source), "web");
        Set<String> stay = new java.util.HashSet<>(uids(bed.podsOn(source), "api"));
        stay.addAll(uids(bed.podsOn(source), "debug"));
        bed.addWorker();
        bed.cordon(source);
        DrainOptions options = DrainBed.options();
        options.setSelector(new io.fabric8.kubernetes.api.model.LabelSelectorBuilder()
                .addNewMatchExpression().withKey("app").withOperator("In").withValues("web", "debug").endMatchExpression()
                .addNewMatchExpression().withKey("pod-template-hash").withOperator("Exists").endMatchExpression().build());

        DrainResult result = DrainBed.drainToEnd(new NodeDrainer(bed.client), source, options, new DrainState(), null, Duration.ofSeconds(60));

        assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
        assertThat(result.state().getPodsEvicted()).as("the two web pods").isEqualTo(2);
        assertThat(result.state().getLastEvicted()).hasSize(2).allMatch(k -> k.startsWith(bed.namespace + "/web-"));
        assertThat(uids(bed.podsOn(source), null)).as("the api pods and the bare pod stay; no web pod is left").isEqualTo(stay)
                .doesNotContainAnyElementsOf(web);
        assertThat(bed.podsOn(source)).allMatch(p -> p.getMetadata().getDeletionTimestamp() == null);
        bed.awaitReadyPods("web", 2);
    }

    @Test
    void preflightPredictsBlocksAcrossNodesAndTouchesNothing() throws Exception {
        String first = bed.addWorker();
        String second = bed.addWorker();
        bed.deployment("web", 4, false);
        bed.deployment("db", 2, false);
        bed.budget("web-pdb", "web", null, "1");
        bed.budget("db-pdb", "db", 2, null);
        bed.awaitReadyPods("web", 4);
        bed.awaitReadyPods("db", 2);
        bed.awaitBudget("web-pdb", 4, 4);
        bed.awaitBudget("db-pdb", 2, 2);
        bed.barePod("solo", first, List.of());
        bed.awaitReadyPods("solo", 1);
        Map<String, Set<String>> before = Map.of(first, uids(bed.podsOn(first), null), second, uids(bed.podsOn(second), null));
        Map<String, String> nodesBefore = Map.of(first, specAndAnnotations(first), second, specAndAnnotations(second));

        PreflightPrediction.Report report = new DrainPreflight(bed.client).check(List.of(first, second), Draining.TOGETHER, DrainBed.options(), Instant.now());

        assertThat(report.predictsBlock()).isTrue();
        String text = report.describe();
        assertThat(text).contains("pdb " + bed.namespace + "/db-pdb: needs 2 healthy, has 2, 0 disruptions allowed; the drain would evict 2 of its pods")
                .contains("pdb " + bed.namespace + "/web-pdb: needs 3 healthy, has 4, 1 disruption allowed; the drain would evict 4 of its pods")
                .contains("node " + first + ": cannot delete pods that no controller manages");
        assertThat(report.budgets()).filteredOn(b -> b.numbers().name().equals("web-pdb")).singleElement()
                .as("web's pods select the test's pool, whose two nodes are both drained: no replacement can run")
                .satisfies(b -> assertThat(b.blocks()).isTrue())
                .satisfies(b -> assertThat(b.describe()).contains("no replacement of Deployment " + bed.namespace + "/web can be scheduled")
                        .contains("2 node(s) are being drained").contains("didn't match Pod's node affinity/selector"));

        String spare = bed.addWorker();
        // Ready is not yet schedulable: the node-lifecycle controller lifts its not-ready taint on
        // its next pass, and until then kube-scheduler (and so the prediction) rightly skips the node.
        Awaitility.await().atMost(Duration.ofSeconds(60))
                .until(() -> bed.client.nodes().withName(spare).get().getSpec().getTaints() == null
                        || bed.client.nodes().withName(spare).get().getSpec().getTaints().isEmpty());
        PreflightPrediction.Report withRoom = new DrainPreflight(bed.client).check(List.of(first, second), Draining.TOGETHER, DrainBed.options(), Instant.now());
        assertThat(withRoom.budgets()).filteredOn(b -> b.numbers().name().equals("web-pdb")).singleElement()
                .as("replacements can run on %s: the budget only slows the drain", spare)
                .satisfies(b -> assertThat(b.blocks()).isFalse());
        assertThat(Map.of(first, uids(bed.podsOn(first), null), second, uids(bed.podsOn(second), null))).isEqualTo(before);
        assertThat(bed.podsOn(first)).allMatch(p -> p.getMetadata().getDeletionTimestamp() == null);
        assertThat(bed.podsOn(second)).allMatch(p -> p.getMetadata().getDeletionTimestamp() == null);
        // Spec and annotations, not the resourceVersion: the node's own status heartbeats change that.
        assertThat(Map.of(first, specAndAnnotations(first), second, specAndAnnotations(second)))
                .as("no node was cordoned, tainted or annotated").isEqualTo(nodesBefore);
        assertThat(bed.client.nodes().withName(first).get().getSpec().getUnschedulable()).isNotEqualTo(Boolean.TRUE);
    }

    private String specAndAnnotations(String node) {
        Node read = bed.client.nodes().withName(node).get();
        return bed.client.getKubernetesSerialization().asJson(read.getSpec()) + read.getMetadata().getAnnotations();
    }

    @Test
    void aDrainSavedMidwayIsFinishedByANewEngine() throws Exception {
        String source = bed.addWorker();
        bed.deployment("web", 4, false);
        bed.deployment("api", 3, false);
        bed.budget("web-pdb", "web", null, "1");
        bed.awaitReadyPods("web", 4);
        bed.awaitReadyPods("api", 3);
        bed.awaitBudget("web-pdb", 4, 4);
        bed.addWorker();
        bed.cordon(source);
        DrainOptions options = DrainBed.options();

        DrainResult first = new NodeDrainer(bed.client).step(source, options, new DrainState(), null, Instant.now());
        assertThat(first.outcome()).as(first.report()).isEqualTo(Outcome.IN_PROGRESS);
        assertThat(first.report()).as("the budget holds back three web pods in the first step").contains("pdb " + bed.namespace + "/web-pdb");
        String saved = bed.client.getKubernetesSerialization().asJson(first.state());

        // A restarted operator: a new client, a new engine, only the state from the CR status.
        Config config = new io.fabric8.kubernetes.client.ConfigBuilder(bed.client.getConfiguration()).withRequestRetryBackoffLimit(0).build();
        try (KubernetesClient restarted = new KubernetesClientBuilder().withConfig(config).build()) {
            DrainState restored = restarted.getKubernetesSerialization().unmarshal(saved, DrainState.class);
            assertThat(restored.getAttempt()).isEqualTo(1);
            assertThat(restored.getAttemptStartedAt()).isEqualTo(first.state().getAttemptStartedAt());
            // The three api pods and the web pod(s) the budget allowed (a replacement Ready within the step frees another).
            assertThat(restored.getPodsSeen()).isEqualTo(first.state().getPodsSeen());
            assertThat(restored.getPodsEvicted()).as("the three api pods and 1-3 web pods").isBetween(4, 6).isEqualTo(first.state().getPodsSeen().size());

            DrainResult result = DrainBed.drainToEnd(new NodeDrainer(restarted), source, options, restored, null, Duration.ofSeconds(90));

            assertThat(result.outcome()).as(result.report()).isEqualTo(Outcome.DONE);
            assertThat(result.state().getAttempt()).as("the same attempt carried on").isEqualTo(1);
            assertThat(result.state().getPodsEvicted()).as("each pod evicted once, across the restart").isEqualTo(7);
        }
        assertThat(bed.podsOn(source)).isEmpty();
    }

    private static Set<String> uids(List<Pod> pods, String app) {
        return pods.stream().filter(p -> app == null || app.equals(p.getMetadata().getLabels().get("app")))
                .map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    }

    /** Eviction POSTs, and lists (not watches) of the paths {@code listed} accepts, as a client sends them. */
    private static final class SentRequests {
        final AtomicInteger evictions = new AtomicInteger();
        final AtomicInteger lists = new AtomicInteger();
        private final java.util.function.Predicate<String> listed;

        SentRequests(java.util.function.Predicate<String> listed) {
            this.listed = listed;
        }

        void seen(io.fabric8.kubernetes.client.http.HttpRequest request) {
            String path = request.uri().getPath();
            String query = request.uri().getQuery() == null ? "" : request.uri().getQuery();
            if (path.endsWith("/eviction")) {
                evictions.incrementAndGet();
            } else if (listed.test(path) && !query.contains("watch=true")) {
                lists.incrementAndGet();
            }
        }
    }
}
