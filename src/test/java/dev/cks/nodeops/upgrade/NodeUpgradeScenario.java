package dev.cks.nodeops.upgrade;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;

/**
 * What every NodeUpgrade IT class shares: the packaged operator and the simulated kubelets per class
 * ({@link KubeletUpgradeSimulation} brings a node back at the Job's target version when its Job
 * succeeds), and per test its own nodes ({@link UpgradeBed}, grouped by a label named after the test).
 */
@ExtendWith(TestBedExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class NodeUpgradeScenario {
    private final String prefix;
    private Map<String, String> properties;
    protected TestBed testBed;
    protected OperatorProcess operator;
    protected KubeletUpgradeSimulation kubelets;
    protected UpgradeBed bed;

    NodeUpgradeScenario(String prefix) {
        this.prefix = prefix;
    }

    /**
     * The Script executor's script in a ConfigMap of the operator's namespace (key {@code upgrade.sh}); returns the property
     * with its sha256, without which the operator runs no script.
     */
    protected static Map<String, String> trustedScript(TestBed shared, String configMap, String script) {
        shared.client().configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata().withName(configMap).endMetadata().addToData("upgrade.sh", script).build()).serverSideApply();
        return Map.of("cks.upgrade.script-sha256", ScriptTrust.sha256(script));
    }

    /** What the class needs before the operator starts; returns the operator's extra properties. */
    protected Map<String, String> prepare(TestBed shared) {
        return Map.of();
    }

    /** What the class started in {@link #prepare}, stopped after the operator. */
    protected void finish() {
    }

    @BeforeAll
    void startOperator(TestBed shared) {
        testBed = shared;
        properties = prepare(shared);
        kubelets = new KubeletUpgradeSimulation(shared.client(), TestBed.OPERATOR_NAMESPACE);
        operator = OperatorProcess.start(shared, "nodeupgrade-" + prefix, properties);
    }

    /** A second operator process with the class's properties: a standby while the class's operator holds the Lease. */
    protected OperatorProcess startStandby() {
        return OperatorProcess.start(testBed, "nodeupgrade-" + prefix + "-standby", properties);
    }

    /** The operator is replaced by one that halts at the kill point ({@link KillPoint}); see {@link #awaitHaltedAndRestart}. */
    protected void restartHaltingAt(String point) {
        operator.close();
        Map<String, String> halting = new java.util.LinkedHashMap<>(properties);
        halting.put(KillPoint.PROPERTY, point);
        operator = OperatorProcess.start(testBed, "nodeupgrade-" + prefix, halting);
    }

    /** Waits until the operator halted at its kill point (exit 137, its line in the output), then starts a normal one. */
    protected void awaitHaltedAndRestart(String point, java.time.Duration within) throws java.io.IOException {
        awaitHalted(point, within);
        operator = OperatorProcess.start(testBed, "nodeupgrade-" + prefix, properties);
    }

    /** Waits until the operator halted at its kill point, then starts one that halts at the next point. */
    protected void awaitHaltedAndRestartHaltingAt(String point, String next, java.time.Duration within) throws java.io.IOException {
        awaitHalted(point, within);
        restartHaltingAt(next);
    }

    private void awaitHalted(String point, java.time.Duration within) throws java.io.IOException {
        int status = operator.awaitExit(within);
        org.assertj.core.api.Assertions.assertThat(operator.output()).as("the operator halted at its kill point").contains("KILL POINT " + point);
        org.assertj.core.api.Assertions.assertThat(status).isEqualTo(KillPoint.EXIT_STATUS);
        operator.expireItsLease();
    }

    @AfterAll
    void stopOperator() {
        if (operator != null) {
            operator.close();
        }
        if (kubelets != null) {
            kubelets.close();
        }
        finish();
    }

    @BeforeEach
    void setUp(TestInfo test) {
        String method = test.getTestMethod().orElseThrow().getName().toLowerCase();
        bed = new UpgradeBed(testBed, prefix, prefix + "-" + method.substring(0, Math.min(method.length(), 20)));
    }

    @AfterEach
    void tearDown() {
        bed.cleanUp();
    }
}
