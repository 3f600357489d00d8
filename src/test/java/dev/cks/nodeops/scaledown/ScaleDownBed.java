package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.RecordedCall;
import dev.cks.nodeops.common.Conditions;
import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.drain.DrainBed;
import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.nodes.NodeReadiness;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * One ScaleDown IT class's world: a control-plane node and workers named after the class's own cluster
 * prefix, a CloudStack simulator whose CKS cluster maps exactly those nodes, and the packaged operator
 * pointed at it. Workloads come from {@link DrainBed} (pods land only on this test's workers).
 */
final class ScaleDownBed implements AutoCloseable {
    /** Cloud-side commands that change something; a rolled-back ScaleDown must have sent none. */
    static final List<String> CLOUDSTACK_WRITES = List.of("scaleKubernetesCluster", "destroyVirtualMachine", "removeVirtualMachinesFromKubernetesCluster");

    final TestBed bed;
    final KubernetesClient client;
    final String prefix;
    final CloudStackFixture fixture;
    final String controlPlane;
    private final String operatorName;
    /** The class's own operator properties, on top of the fixture's. */
    private final Map<String, String> classProperties;
    private OperatorProcess operator;

    ScaleDownBed(TestBed bed, String prefix, String clusterType, Map<String, String> classProperties) {
        this.bed = bed;
        this.classProperties = classProperties;
        this.client = bed.client();
        this.prefix = prefix;
        Node control = bed.addControlPlane(prefix);
        this.controlPlane = control.getMetadata().getName();
        this.fixture = CloudStackFixture.forNodes(bed, prefix, clusterType, List.of(control));
        this.operatorName = "scaledown-" + prefix;
        startOperator();
    }

    void startOperator() {
        startOperator(Map.of());
    }

    void startOperator(Map<String, String> extra) {
        Map<String, String> properties = new LinkedHashMap<>(fixture.operatorProperties());
        properties.put("cks.cloudstack.cluster-id", fixture.cluster().id());
        properties.putAll(classProperties);
        properties.putAll(extra);
        operator = OperatorProcess.start(bed, operatorName, properties);
    }

    /**
     * The operator is replaced by one that halts at the kill point (see {@link KillPoint}); the test then
     * starts what halts it and calls {@link #awaitHaltedAndRestart}.
     */
    void restartHaltingAt(String point) {
        operator.close();
        startOperator(Map.of(KillPoint.PROPERTY, point));
    }

    /** Waits until the operator halted at its kill point (exit 137, its line in the output), then starts a normal one. */
    void awaitHaltedAndRestart(String point, Duration within) {
        awaitHalted(point, within);
        startOperator();
    }

    /**
     * Halts at each point in turn: the operator armed at the first (by {@link #restartHaltingAt}) halts there, the
     * next one started is armed at the second, and so on; after the last a normal one starts.
     */
    void awaitHaltedAtEachAndRestart(List<String> points, Duration within) {
        for (int i = 0; i < points.size(); i++) {
            awaitHalted(points.get(i), within);
            startOperator(i + 1 < points.size() ? Map.of(KillPoint.PROPERTY, points.get(i + 1)) : Map.of());
        }
    }

    private void awaitHalted(String point, Duration within) {
        int status = operator.awaitExit(within);
        try {
            assertThat(operator.output()).as("the operator halted at its kill point").contains("KILL POINT " + point);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertThat(status).isEqualTo(KillPoint.EXIT_STATUS);
        operator.expireItsLease();
    }

    /** The operator is replaced by one with these properties as well. */
    void restartWith(Map<String, String> extra) {
        operator.close();
        startOperator(extra);
    }

    boolean operatorAlive() {
        return operator.isAlive();
    }

    /** SIGKILL, as when the operator's node dies; its Lease expires at once ({@link OperatorProcess#expireItsLease}). */
    void killOperator() {
        operator.kill();
        operator.expireItsLease();
    }

    CloudStackSimulator simulator() {
        return fixture.simulator();
    }

    /** A worker in the test's pod pool and in the CKS cluster's VM map. */
    String addWorker(DrainBed pool) {
        String name = pool.addWorker(prefix);
        fixture.addNodeVm(client.nodes().withName(name).get());
        return name;
    }

    ScaleDown create(String name, List<String> nodeNames, Integer count, ScaleDownSpec.Removal removal, int timeoutSeconds, DrainOptions drain) {
        return create(name, nodeNames, count, removal, timeoutSeconds, drain, Preflight.Warn);
    }

    ScaleDown create(String name, List<String> nodeNames, Integer count, ScaleDownSpec.Removal removal, int timeoutSeconds, DrainOptions drain,
            Preflight preflight) {
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setPreflight(preflight);
        spec.setNodeNames(nodeNames);
        spec.setCount(count);
        if (count != null) {
            spec.setSelectionPolicy(ScaleDownSpec.SelectionPolicy.FewestPods);
        }
        spec.setRemoval(removal);
        spec.setTimeoutSeconds(timeoutSeconds);
        spec.setDrain(drain);
        ScaleDown resource = new ScaleDown();
        resource.setMetadata(new ObjectMetaBuilder().withName(name).build());
        resource.setSpec(spec);
        return client.resource(resource).create();
    }

    /** Short attempts so blocked drains give up within seconds. */
    static DrainOptions drain(int timeoutSeconds, int retries) {
        DrainOptions options = new DrainOptions();
        options.setTimeoutSeconds(timeoutSeconds);
        options.setRetries(retries);
        options.setRetryIntervalSeconds(1);
        return options;
    }

    ScaleDown get(String name) {
        return client.resources(ScaleDown.class).withName(name).get();
    }

    /** Waits for the phase; fails at once, with the status, when the ScaleDown finished in another phase. */
    ScaleDown awaitPhase(String name, ScaleDownStatus.Phase phase, Duration within) {
        return await(name, "in phase " + phase, resource -> phaseOf(resource) == phase, within);
    }

    /**
     * Waits for the condition; fails at once when the ScaleDown finished without it, and on time-out, with the
     * status, events and the operator's log either way (a clean CI run has nothing else to read).
     */
    ScaleDown await(String name, String what, Predicate<ScaleDown> condition, Duration within) {
        try {
            Awaitility.await("ScaleDown " + name + ": " + what).atMost(within).pollInterval(Duration.ofMillis(200))
                    .failFast(() -> {
                        ScaleDown now = get(name);
                        if (isFinished(phaseOf(now)) && !condition.test(now)) {
                            throw new AssertionError("ScaleDown " + name + " finished before " + what + ": " + diagnosis(name));
                        }
                    })
                    .until(() -> condition.test(get(name)));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("ScaleDown " + name + ": not " + what + " within " + within + "; " + diagnosis(name), e);
        }
        return get(name);
    }

    /** What a failed wait has to go on: the status, the events and the operator's log. */
    private String diagnosis(String name) {
        return describe(get(name)) + "\nevents:\n" + String.join("\n", bed.eventsOf(name).stream()
                .map(e -> e.getType() + " " + e.getReason() + ": " + e.getMessage()).toList()) + "\noperator log:\n" + operator.logTail();
    }

    static String describe(ScaleDown resource) {
        return resource == null || resource.getStatus() == null ? "(no status)"
                : "phase " + resource.getStatus().getPhase() + ", message " + resource.getStatus().getMessage() + ", conditions " + resource.getStatus().getConditions();
    }

    private static ScaleDownStatus.Phase phaseOf(ScaleDown resource) {
        return resource == null || resource.getStatus() == null ? null : resource.getStatus().getPhase();
    }

    private static boolean isFinished(ScaleDownStatus.Phase phase) {
        return phase == ScaleDownStatus.Phase.Succeeded || phase == ScaleDownStatus.Phase.RolledBack || phase == ScaleDownStatus.Phase.Failed;
    }

    static Condition condition(ScaleDown resource, String type) {
        return Conditions.find(resource.getStatus().getConditions(), type)
                .orElseThrow(() -> new AssertionError("ScaleDown " + resource.getMetadata().getName() + " has no " + type
                        + " condition; status: " + resource.getStatus().getConditions()));
    }

    /** Deletes the ScaleDown and waits until its finalizer is gone (the operator runs its cleanup). */
    void delete(String name) {
        client.resources(ScaleDown.class).withName(name).delete();
        client.resources(ScaleDown.class).withName(name).waitUntilCondition(sd -> sd == null, 60, TimeUnit.SECONDS);
    }

    boolean isUnschedulable(String node) {
        return NodeReadiness.isUnschedulable(client.nodes().withName(node).get());
    }

    /** Annotations this operator writes; none must be left on a node after a rollback. */
    Map<String, String> operatorAnnotations(String node) {
        Map<String, String> ours = new LinkedHashMap<>();
        Map<String, String> annotations = client.nodes().withName(node).get().getMetadata().getAnnotations();
        if (annotations != null) {
            annotations.forEach((k, v) -> {
                if (k.equals(NodeAnnotations.LOCK) || k.equals(NodeAnnotations.CORDONED_BY)) {
                    ours.put(k, v);
                }
            });
        }
        return ours;
    }

    List<RecordedCall> cloudStackWrites() {
        List<RecordedCall> writes = new ArrayList<>();
        CLOUDSTACK_WRITES.forEach(command -> writes.addAll(simulator().calls(command)));
        return writes;
    }

    void assertNodeGone(String node) {
        Awaitility.await("Node " + node + " deleted").atMost(Duration.ofSeconds(30)).until(() -> client.nodes().withName(node).get() == null);
        assertThat(client.nodes().withName(node).get()).isNull();
    }

    /** The operator's Prometheus page. */
    String metrics() {
        try {
            return operator.httpGet("/q/metrics");
        } catch (java.io.IOException e) {
            throw new AssertionError("the operator's /q/metrics could not be read: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        if (operator != null) {
            operator.close();
        }
        fixture.close();
        client.nodes().withName(controlPlane).delete();
    }
}
