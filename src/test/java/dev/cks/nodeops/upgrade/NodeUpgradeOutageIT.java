package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.cks.nodeops.testbed.KubeletUpgradeSimulation.SeenJob;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Phase;

/**
 * The API server (or etcd) goes away for as long as `kubeadm upgrade apply` keeps a single control plane
 * down, in the middle of a NodeUpgrade: the operator keeps its leader Lease (production timings), waits
 * instead of failing or restarting, and the upgrade completes with one Job per node. In the outage group
 * (`./mvnw verify -Poutage`, docs/reliability.md): each case takes minutes.
 */
class NodeUpgradeOutageIT extends NodeUpgradeScenario {
    private static final String SCRIPT_CONFIGMAP = "nu-outage-upgrade";
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade node\n";
    private static final Duration WITHIN = Duration.ofMinutes(4);

    NodeUpgradeOutageIT() {
        super("nuout");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        Map<String, String> properties = new java.util.HashMap<>(trustedScript(shared, SCRIPT_CONFIGMAP, SCRIPT));
        // The production Lease: the leader must keep leading through the outage, not hand over or restart.
        properties.putAll(Map.of("cks.leader-election.lease-duration-seconds", "150",
                "cks.leader-election.renew-deadline-seconds", "120", "cks.leader-election.retry-period-seconds", "5"));
        return properties;
    }

    @ParameterizedTest(name = "{0} down {1}s while the node is {2}")
    @CsvSource({"kube-apiserver, 90, Draining", "kube-apiserver, 90, Upgrading", "kube-apiserver, 90, WaitingReady", "etcd, 30, Upgrading"})
    void theUpgradeCompletesAcrossAnOutage(String component, int seconds, Phase during) throws Exception {
        String worker = bed.worker(FROM);
        String name = "nu-outage-" + component.charAt(0) + "-" + during.name().toLowerCase();
        Instant back;
        // try-with-resources: a failure to bring the component back stays the test's error (the release of the hold is suppressed into it).
        try (AutoCloseable hold = holdIn(during, worker)) {
            bed.create(name, UpgradeBed.script(SCRIPT_CONFIGMAP, "upgrade.sh"), spec -> {
                spec.setReadyTimeoutSeconds(900);
                spec.setTimeoutSeconds(1800);
                spec.getDrain().setTimeoutSeconds(600);
            });
            bed.await(name, WITHIN, upgrade -> nodeStatus(upgrade, worker).getPhase() == during);

            testBed.stopComponent(component);
            Thread.sleep(Duration.ofSeconds(seconds).toMillis());
            assertThat(operator.isAlive()).as("the operator waited through the outage instead of exiting").isTrue();
            assertThat(operator.httpStatus("/q/health/live")).as("alive for its liveness probe: not restarted by the kubelet").isEqualTo(200);
            back = testBed.startComponent(component);
        }
        NodeUpgrade done = bed.await(name, WITHIN, phase(NodeUpgradeStatus.Phase.Succeeded));
        // A figure for docs/reliability.md, not a timed assertion: how long the operator took to catch up.
        System.out.printf("OUTAGE %s down %d s while %s: Succeeded %d s after the API server answered again%n",
                component, seconds, during, Duration.between(back, Instant.now()).toSeconds());

        assertThat(operator.isAlive()).isTrue();
        assertThat(operator.output()).doesNotContain("Lost the leader Lease");
        assertThat(kubelets.jobsOn(List.of(worker))).as("one Job").extracting(SeenJob::node).containsExactly(worker);
        assertThat(nodeStatus(done, worker).getPhase()).isEqualTo(Phase.Succeeded);
        bed.assertReleased(worker, false);
    }

    /** Keeps the node in the phase until closed: a budget holds its pods, its Job has no pod, or its kubelet stays old. */
    private AutoCloseable holdIn(Phase phase, String worker) {
        return switch (phase) {
            case Draining -> {
                String namespace = testBed.newNamespace("nuout");
                bed.podsBlockedByABudget(worker, namespace);
                yield () -> bed.client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").delete();
            }
            case Upgrading -> new PodsHeldOffNode(bed.client, worker, TestBed.OPERATOR_NAMESPACE);
            case WaitingReady -> {
                kubelets.hold(worker);
                yield () -> kubelets.release(worker);
            }
            default -> throw new IllegalArgumentException("no way to hold a node in " + phase);
        };
    }
}
