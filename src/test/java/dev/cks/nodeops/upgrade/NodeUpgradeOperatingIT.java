package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.drain.EscalationStep;
import dev.cks.nodeops.drain.PodDrainPolicy;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.operation.MaintenanceWindow;
import dev.cks.nodeops.operation.WorkGate;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testing.TestWindows;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/**
 * How a NodeUpgrade is operated, on the bed with the packaged operator: its maintenance window (a
 * non-UTC zone, opening and closing mid-run), maxUnavailable, pause and resume mid-drain, the per-pod
 * drain policy, the escalation ladder of a drain blocked for good, and the version-skew guard.
 */
class NodeUpgradeOperatingIT extends NodeUpgradeScenario {
    private static final String SCRIPT_CONFIGMAP = "nu-op-kubeadm-upgrade";
    private static final String SCRIPT = "#!/bin/sh\nset -eu\nif [ \"$2\" = apply ]; then kubeadm upgrade apply \"$1\" --yes; else kubeadm upgrade node; fi\n";
    private static final Duration WITHIN = Duration.ofSeconds(120);
    private static final String POOL = "nu-op-pool";

    NodeUpgradeOperatingIT() {
        super("nuop");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return trustedScript(shared, SCRIPT_CONFIGMAP, SCRIPT);
    }

    private static UpgradeExecutor script() {
        return UpgradeBed.script(SCRIPT_CONFIGMAP, "upgrade.sh");
    }

    private void patchSpec(String name, String json) {
        bed.client.resources(NodeUpgrade.class).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":" + json + "}");
    }

    private static boolean hasCondition(NodeUpgrade upgrade, String type, String status, String reason) {
        return Conditions.find(upgrade.getStatus().getConditions(), type)
                .map(c -> c.getStatus().equals(status) && (reason == null || reason.equals(c.getReason()))).orElse(false);
    }

    /** Pods of this test select the node by a label only it carries. */
    private void pool(String node, String namespace) {
        bed.client.nodes().withName(node).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"" + POOL + "\":\"" + namespace + "\"}}}");
    }

    private void deployment(String namespace, String app, int replicas, Map<String, String> annotations) {
        bed.client.apps().deployments().inNamespace(namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName(app).endMetadata()
                .withNewSpec().withReplicas(replicas).withNewSelector().addToMatchLabels("app", app).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", app).addToAnnotations(annotations).endMetadata()
                .withNewSpec().withNodeSelector(Map.of(POOL, namespace)).withTerminationGracePeriodSeconds(1L)
                .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
    }

    private void budget(String namespace, String app, int minAvailable) {
        bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName(app + "-pdb").endMetadata()
                .withNewSpec().withMinAvailable(new IntOrString(minAvailable)).withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
                .build()).create();
    }

    private Pod barePod(String namespace, String name, String node, String behavior) {
        return bed.client.pods().inNamespace(namespace).resource(new PodBuilder()
                .withNewMetadata().withName(name).addToLabels("app", name).addToAnnotations(PodDrainPolicy.BEHAVIOR, behavior).endMetadata()
                .withNewSpec().withNodeName(node).withTerminationGracePeriodSeconds(1L)
                .addNewContainer().withName("app").withImage("registry.invalid/app:1").endContainer().endSpec().build()).create();
    }

    private void awaitPods(String namespace, String app, int ready) {
        Awaitility.await(ready + " Ready pods of " + namespace + "/" + app).atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300))
                .until(() -> bed.client.pods().inNamespace(namespace).withLabel("app", app).list().getItems().stream()
                        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                        .filter(p -> p.getStatus() != null && p.getStatus().getConditions() != null && p.getStatus().getConditions().stream()
                                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))).count() == ready);
    }

    private void awaitBudget(String namespace, String app, int healthy) {
        Awaitility.await("PDB " + namespace + "/" + app + "-pdb counts " + healthy + " healthy pods").atMost(Duration.ofSeconds(90)).until(() -> {
            var pdb = bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(app + "-pdb").get();
            return pdb.getStatus() != null && pdb.getStatus().getCurrentHealthy() != null && pdb.getStatus().getCurrentHealthy() == healthy
                    && pdb.getStatus().getObservedGeneration() != null && pdb.getStatus().getObservedGeneration().equals(pdb.getMetadata().getGeneration());
        });
    }

    /**
     * Created before its window (in Asia/Kolkata, UTC+5:30) it plans and waits, touching no node, with the
     * opening in status and in `kubectl get`; once open it starts; when the window closes during a node's
     * drain, that node is finished and the next one waits for the next opening.
     */
    @Test
    void waitsForItsWindowStartsWhenItOpensAndFinishesOnlyTheNodeInProgressWhenItCloses() {
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        String namespace = testBed.newNamespace("nuop-window");
        pool(w1, namespace);
        deployment(namespace, "web", 2, Map.of());
        budget(namespace, "web", 2);
        awaitPods(namespace, "web", 2);
        awaitBudget(namespace, "web", 2);
        ZoneId kolkata = ZoneId.of("Asia/Kolkata");
        // At least 25 s from now, on a minute: the window is that one minute.
        ZonedDateTime opens = ZonedDateTime.now(kolkata).plusSeconds(25).truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
        MaintenanceWindow window = TestWindows.window(kolkata.getId(), opens.format(DateTimeFormatter.ofPattern("HH:mm")),
                opens.getHour() == 23 && opens.getMinute() == 59 ? "24:00" : opens.plusMinutes(1).format(DateTimeFormatter.ofPattern("HH:mm")),
                MaintenanceWindow.Day.values()[opens.getDayOfWeek().getValue() - 1]);

        bed.create("nu-window", script(), spec -> {
            spec.setWindow(window);
            spec.getDrain().setTimeoutSeconds(300);
        });
        NodeUpgrade waiting = bed.await("nu-window", WITHIN, u -> hasCondition(u, Conditions.WAITING, "True", WorkGate.OUTSIDE_WINDOW));

        assertThat(hasCondition(waiting, Conditions.ACCEPTED, "True", "Planned")).isTrue();
        assertThat(waiting.getStatus().getWindow().getOpensAt()).isEqualTo(opens.toInstant().toString());
        assertThat(Conditions.find(waiting.getStatus().getConditions(), Conditions.WAITING).orElseThrow().getMessage())
                .contains(opens.format(DateTimeFormatter.ofPattern("HH:mm")) + " Asia/Kolkata");
        assertThat(testBed.tool("kubectl", "get", "nu", "nu-window")).contains("NEXT WINDOW").contains(opens.toInstant().toString());
        bed.assertReleased(w1, false);
        bed.assertReleased(w2, false);

        NodeUpgrade draining = bed.await("nu-window", Duration.ofSeconds(150), u -> u.getStatus().getNodes().stream()
                .anyMatch(n -> n.getName().equals(w1) && n.getPhase() == Phase.Draining));
        assertThat(Instant.parse(nodeStatus(draining, w1).getStartedAt())).as("started when the window opened")
                .isAfterOrEqualTo(opens.toInstant());

        // The web PDB holds the drain past the window's end; then the budget goes and the node finishes.
        bed.await("nu-window", Duration.ofSeconds(90), u -> u.getStatus().getWindow() != null
                && u.getStatus().getWindow().getState() == dev.cks.nodeops.operation.NodeOperationStatus.WindowStatus.State.Closed);
        bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").delete();
        NodeUpgrade closed = bed.await("nu-window", WITHIN, u -> nodeStatus(u, w1).getPhase() == Phase.Succeeded
                && hasCondition(u, Conditions.WAITING, "True", WorkGate.OUTSIDE_WINDOW));

        assertThat(nodeStatus(closed, w2).getPhase()).as("the next node waits for the next opening").isEqualTo(Phase.Pending);
        assertThat(Instant.parse(closed.getStatus().getWindow().getOpensAt())).isEqualTo(opens.plusWeeks(1).toInstant());
        bed.assertReleased(w1, false);
        bed.assertReleased(w2, false);
        bed.client.namespaces().withName(namespace).delete();
    }

    /** Two workers at once, never more, as the cordon times on the API server show; the control plane first and alone. */
    @Test
    void maxUnavailableTwoUpgradesTwoWorkersAtOnceNeverMoreAndTheControlPlaneAlone() {
        String control = bed.controlPlane(FROM);
        List<String> workers = List.of(bed.worker(FROM), bed.worker(FROM), bed.worker(FROM), bed.worker(FROM));
        try (CordonTimeline timeline = new CordonTimeline(bed.client, bed.nodes)) {
            bed.create("nu-two", script(), spec -> spec.setMaxUnavailable(new IntOrString(2)));
            bed.await("nu-two", Duration.ofSeconds(180), phase(NodeUpgradeStatus.Phase.Succeeded));

            assertThat(timeline.maxCordonedAtOnce()).as("cordoned at once: %s", timeline.describe()).isEqualTo(2);
            assertThat(timeline.cordonedWith(control)).as("the control-plane node alone").isEmpty();
            assertThat(timeline.firstCordon(workers)).as("workers start after the control plane is uncordoned")
                    .isGreaterThan(timeline.uncordonedAt(control));
        }
        bed.nodes.forEach(n -> bed.assertReleased(n, false));
    }

    /** Paused while a PDB holds the drain: it stops evicting, says Paused, and goes on when resumed. */
    @Test
    void pausedMidDrainItStopsAtTheBoundaryAndResumedItCompletes() throws InterruptedException {
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        String namespace = testBed.newNamespace("nuop-pause");
        bed.podsBlockedByABudget(w1, namespace);
        try {
            bed.create("nu-pause", script(), spec -> spec.getDrain().setTimeoutSeconds(300));
            bed.await("nu-pause", WITHIN, u -> u.getStatus().getNodes().stream().anyMatch(n -> n.getName().equals(w1) && n.getPhase() == Phase.Draining));

            patchSpec("nu-pause", "{\"paused\":true}");
            NodeUpgrade paused = bed.await("nu-pause", WITHIN, u -> hasCondition(u, Conditions.PAUSED, "True", "Paused"));
            assertThat(hasCondition(paused, Conditions.WAITING, "True", WorkGate.PAUSED)).isTrue();
            bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").delete();
            Thread.sleep(5000);
            assertThat(bed.client.pods().inNamespace(namespace).withField("spec.nodeName", w1).list().getItems())
                    .as("nothing is evicted while paused, though the budget is gone").hasSize(2)
                    .allSatisfy(p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNull());
            assertThat(nodeStatus(bed.get("nu-pause"), w1).getPhase()).isEqualTo(Phase.Draining);
            assertThat(bed.node(w1).getSpec().getUnschedulable()).isTrue();
            assertThat(nodeStatus(bed.get("nu-pause"), w2).getPhase()).isEqualTo(Phase.Pending);

            patchSpec("nu-pause", "{\"paused\":false}");
            NodeUpgrade done = bed.await("nu-pause", WITHIN, phase(NodeUpgradeStatus.Phase.Succeeded));
            assertThat(Conditions.find(done.getStatus().getConditions(), Conditions.PAUSED)).isEmpty();
            assertThat(bed.events("nu-pause")).extracting(Event::getReason).contains("Paused", "Resumed");
            bed.nodes.forEach(n -> bed.assertReleased(n, false));
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    /**
     * A pod annotated skip stays on the node through its upgrade; one annotated wait-completed holds the
     * drain until it has completed; drain-order 10 goes after the default 0. Preflight names the wait.
     */
    @Test
    void thePodsDrainPolicyIsHonouredSkipStaysWaitCompletedHoldsAndOrderIsKept() {
        String w1 = bed.worker(FROM);
        String namespace = testBed.newNamespace("nuop-policy");
        pool(w1, namespace);
        Pod keeper = barePod(namespace, "keeper", w1, PodDrainPolicy.SKIP);
        barePod(namespace, "batch", w1, PodDrainPolicy.WAIT_COMPLETED);
        deployment(namespace, "web", 1, Map.of());
        deployment(namespace, "db", 1, Map.of(PodDrainPolicy.ORDER, "10"));
        awaitPods(namespace, "web", 1);
        awaitPods(namespace, "db", 1);
        awaitPods(namespace, "batch", 1);
        try (EvictionTimeline evictions = new EvictionTimeline(bed.client, namespace)) {
            bed.create("nu-policy", script(), spec -> spec.getDrain().setTimeoutSeconds(300));
            NodeUpgrade holding = bed.await("nu-policy", WITHIN, u -> u.getStatus().getNodes().stream().anyMatch(n -> n.getDrain() != null
                    && n.getDrain().getBlockedBy() != null && n.getDrain().getBlockedBy().contains("wait-completed to complete: " + namespace + "/batch")));

            assertThat(Conditions.find(holding.getStatus().getConditions(), dev.cks.nodeops.operation.PreflightGate.CONDITION)).get()
                    .satisfies(c -> assertThat(c.getMessage()).contains("the drain waits until it has completed: " + namespace + "/batch"));
            Awaitility.await("web and db evicted").atMost(WITHIN).until(() -> evictions.first("web") != null && evictions.first("db") != null);
            assertThat(evictions.first("web")).as("drain-order 0 before 10").isLessThan(evictions.first("db"));
            Awaitility.await("the drain keeps holding for the batch pod").during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
                    .until(() -> nodeStatus(bed.get("nu-policy"), w1).getPhase() == Phase.Draining);

            bed.client.pods().inNamespace(namespace).withName("batch").subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                    "{\"status\":{\"phase\":\"Succeeded\"}}");
            bed.await("nu-policy", WITHIN, phase(NodeUpgradeStatus.Phase.Succeeded));

            Pod kept = bed.client.pods().inNamespace(namespace).withName("keeper").get();
            assertThat(kept.getMetadata().getUid()).as("the skip pod stayed on the node through its upgrade").isEqualTo(keeper.getMetadata().getUid());
            assertThat(kept.getMetadata().getDeletionTimestamp()).isNull();
            assertThat(kept.getSpec().getNodeName()).isEqualTo(w1);
            assertThat(evictions.first("keeper")).isNull();
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    /**
     * A PDB that blocks forever walks the ladder: a Warning and the DrainBlocked condition naming the PDB
     * and its pods, then the node is skipped and the upgrade goes on. The DeletePods step opts in only
     * batch workers, of which there are none: nothing is deleted. (The operator runs with the chart's
     * default RBAC, which grants no pod deletion; a DeletePods that deletes is DrainIT's.)
     */
    @Test
    void aBudgetBlockingForeverWalksTheLadderAndWithoutOptInNothingIsDeleted() {
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        String namespace = testBed.newNamespace("nuop-ladder");
        bed.podsBlockedByABudget(w1, namespace);
        Set<String> web = new java.util.TreeSet<>(bed.client.pods().inNamespace(namespace).withLabel("app", "web").list().getItems().stream()
                .map(p -> p.getMetadata().getUid()).toList());
        try {
            bed.create("nu-ladder", script(), spec -> {
                spec.getDrain().setTimeoutSeconds(300);
                spec.getDrain().setEscalation(List.of(ladderStep(10, EscalationStep.Action.Warn, null),
                        ladderStep(15, EscalationStep.Action.DeletePods, "batch-worker"), ladderStep(25, EscalationStep.Action.SkipNode, null)));
            });
            NodeUpgrade warned = bed.await("nu-ladder", WITHIN, u -> hasCondition(u, Conditions.DRAIN_BLOCKED, "True", null));
            assertThat(Conditions.find(warned.getStatus().getConditions(), Conditions.DRAIN_BLOCKED).orElseThrow().getMessage())
                    .contains("The drain of node " + w1 + " is blocked").contains("pdb " + namespace + "/web-pdb: needs 2 healthy, has 2");

            NodeUpgrade done = bed.await("nu-ladder", Duration.ofSeconds(150), phase(NodeUpgradeStatus.Phase.Succeeded));

            UpgradeNodeStatus skipped = nodeStatus(done, w1);
            assertThat(skipped.getPhase()).isEqualTo(Phase.Skipped);
            assertThat(skipped.getSkipReason()).contains("spec.drain.escalation step 3 (SkipNode").contains(namespace + "/web-pdb");
            assertThat(skipped.getDrain().getEscalation()).extracting(r -> r.getAction().name() + " " + r.getResult())
                    .containsExactly("Warn warned", "SkipNode gave the node up");
            assertThat(Duration.between(Instant.parse(skipped.getDrain().getEscalation().get(0).getAt()),
                    Instant.parse(skipped.getDrain().getEscalation().get(1).getAt()))).isGreaterThanOrEqualTo(Duration.ofSeconds(15));
            assertThat(nodeStatus(done, w2).getPhase()).isEqualTo(Phase.Succeeded);
            assertThat(Conditions.find(done.getStatus().getConditions(), Conditions.SUCCEEDED).orElseThrow().getReason()).isEqualTo("NodesSkipped");
            assertThat(bed.events("nu-ladder")).extracting(Event::getReason).contains("DrainBlocked", "NodeSkipped").doesNotContain("PodsDeleted");
            assertThat(bed.client.pods().inNamespace(namespace).withLabel("app", "web").list().getItems())
                    .as("not opted in: never deleted").allSatisfy(p -> {
                        assertThat(web).contains(p.getMetadata().getUid());
                        assertThat(p.getMetadata().getDeletionTimestamp()).isNull();
                    });
            bed.nodes.forEach(n -> bed.assertReleased(n, false));
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    /**
     * After its upgrade a node soaks, then waits until the workloads its drain evicted (a Deployment's
     * ReplicaSet and a StatefulSet) are Ready again; only then does the next node start.
     */
    @Test
    void theNextNodeWaitsForTheSoakAndForTheDrainedWorkloadsToBeReadyAgain() {
        List<String> workers = bed.twoWorkersInPlanOrder(FROM);
        String w1 = workers.get(0);
        String w2 = workers.get(1);
        String namespace = testBed.newNamespace("nuop-soak");
        pool(w1, namespace);
        deployment(namespace, "web", 1, Map.of());
        bed.client.apps().statefulSets().inNamespace(namespace).resource(new io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder()
                .withNewMetadata().withName("db").endMetadata()
                .withNewSpec().withReplicas(1).withServiceName("db").withNewSelector().addToMatchLabels("app", "db").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "db").endMetadata()
                .withNewSpec().withNodeSelector(Map.of(POOL, namespace)).withTerminationGracePeriodSeconds(1L)
                .addNewContainer().withName("db").withImage("registry.invalid/db:1").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
        awaitPods(namespace, "web", 1);
        awaitPods(namespace, "db", 1);
        // The running pods stay; their replacements find no node until the label is back.
        bed.client.nodes().withName(w1).patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"labels\":{\"" + POOL + "\":null}}}");
        try {
            bed.create("nu-soak", script(), spec -> {
                spec.setSoakSeconds(3);
                spec.setWaitForDrainedWorkloads(true);
            });
            NodeUpgrade soaking = bed.await("nu-soak", WITHIN, u -> nodeStatus(u, w1).getPhase() == Phase.Soaking
                    && u.getStatus().getMessage() != null && u.getStatus().getMessage().contains("waiting for the workloads"));
            assertThat(soaking.getStatus().getMessage()).contains("StatefulSet " + namespace + "/db (0 of 1 Ready)")
                    .contains("ReplicaSet " + namespace + "/web-");
            assertThat(nodeStatus(soaking, w2).getPhase()).isEqualTo(Phase.Pending);
            assertThat(bed.node(w1).getSpec().getUnschedulable()).as("uncordoned before its soak").isNull();

            pool(w1, namespace);
            NodeUpgrade done = bed.await("nu-soak", WITHIN, phase(NodeUpgradeStatus.Phase.Succeeded));
            Instant soaked = Instant.parse(nodeStatus(done, w1).getCompletedAt());
            assertThat(Instant.parse(nodeStatus(done, w2).getStartedAt())).isAfterOrEqualTo(soaked);
            assertThat(soaked).isAfterOrEqualTo(Instant.parse(nodeStatus(done, w1).getSoakUntil()));
        } finally {
            bed.client.namespaces().withName(namespace).delete();
        }
    }

    /** A worker-only upgrade above the API server's minor version is refused, quoting the skew policy, before any cordon. */
    @Test
    void aWorkerOnlyUpgradeAboveTheApiServerIsRefusedQuotingTheSkewPolicy() {
        String w1 = bed.worker(FROM);
        bed.create("nu-skew", script(), spec -> spec.setTargetVersion("v1.36.0"));
        NodeUpgrade refused = bed.await("nu-skew", WITHIN, phase(NodeUpgradeStatus.Phase.Failed));

        assertThat(Conditions.find(refused.getStatus().getConditions(), Conditions.ACCEPTED)).get().satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("Refused");
            assertThat(c.getMessage()).contains("\"kubelet must not be newer than kube-apiserver, and may be up to three minor versions older")
                    .contains("the API server is at " + testBed.serverVersion()).contains("Nothing was cordoned");
        });
        bed.assertReleased(w1, false);
        assertThat(kubelets.jobsOn(List.of(w1))).isEmpty();
    }

    private static EscalationStep ladderStep(int after, EscalationStep.Action action, String app) {
        EscalationStep step = new EscalationStep();
        step.setAfterSeconds(after);
        step.setAction(action);
        if (app != null) {
            step.setSelector(new LabelSelectorBuilder().addToMatchLabels("app", app).build());
        }
        return step;
    }

    /** When each node became unschedulable and schedulable again, in the API server's own order (etcd revisions). */
    static final class CordonTimeline implements AutoCloseable {
        private final ConcurrentSkipListMap<Long, String> changes = new ConcurrentSkipListMap<>();
        private final Map<String, Boolean> last = new HashMap<>();
        private final Watch watch;

        CordonTimeline(io.fabric8.kubernetes.client.KubernetesClient client, List<String> nodes) {
            this.watch = client.nodes().watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Node node) {
                    String name = node.getMetadata().getName();
                    if (!nodes.contains(name)) {
                        return;
                    }
                    boolean cordoned = NodeReadiness.isUnschedulable(node);
                    synchronized (last) {
                        if (!Boolean.valueOf(cordoned).equals(last.getOrDefault(name, false))) {
                            last.put(name, cordoned);
                            changes.put(Long.parseLong(node.getMetadata().getResourceVersion()), (cordoned ? "+" : "-") + name);
                        }
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
        }

        /** The sets of nodes cordoned together, after each change. */
        private List<Set<String>> sets() {
            List<Set<String>> sets = new ArrayList<>();
            Set<String> now = new LinkedHashSet<>();
            for (String change : changes.values()) {
                if (change.startsWith("+")) {
                    now.add(change.substring(1));
                } else {
                    now.remove(change.substring(1));
                }
                sets.add(new LinkedHashSet<>(now));
            }
            return sets;
        }

        int maxCordonedAtOnce() {
            return sets().stream().mapToInt(Set::size).max().orElse(0);
        }

        Set<String> cordonedWith(String node) {
            Set<String> others = new LinkedHashSet<>();
            sets().stream().filter(s -> s.contains(node)).forEach(s -> s.stream().filter(n -> !n.equals(node)).forEach(others::add));
            return others;
        }

        long firstCordon(List<String> nodes) {
            return changes.entrySet().stream().filter(e -> nodes.stream().anyMatch(n -> e.getValue().equals("+" + n))).mapToLong(Map.Entry::getKey)
                    .min().orElseThrow();
        }

        long uncordonedAt(String node) {
            return changes.entrySet().stream().filter(e -> e.getValue().equals("-" + node)).mapToLong(Map.Entry::getKey).min()
                    .orElseThrow(() -> new AssertionError(node + " was never uncordoned: " + describe()));
        }

        String describe() {
            return changes.toString();
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    /** The etcd revision at which each app's first pod was marked for deletion (evicted). */
    static final class EvictionTimeline implements AutoCloseable {
        private final Map<String, Long> first = new java.util.concurrent.ConcurrentHashMap<>();
        private final Watch watch;

        EvictionTimeline(io.fabric8.kubernetes.client.KubernetesClient client, String namespace) {
            this.watch = client.pods().inNamespace(namespace).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, Pod pod) {
                    if (pod.getMetadata().getDeletionTimestamp() != null && pod.getMetadata().getLabels() != null) {
                        first.putIfAbsent(pod.getMetadata().getLabels().get("app"), Long.parseLong(pod.getMetadata().getResourceVersion()));
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
        }

        Long first(String app) {
            return first.get(app);
        }

        @Override
        public void close() {
            watch.close();
        }
    }
}
