package dev.cks.nodeops.scaledown;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.drain.DrainBed;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;

/**
 * What every ScaleDown IT class shares: one simulated CKS cluster and operator per class
 * ({@link ScaleDownBed}), and per test its own namespace and workers ({@link DrainBed}), whose
 * ScaleDown is named after the namespace.
 */
@ExtendWith(TestBedExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ScaleDownScenario {
    private final String prefix;
    private final String clusterType;
    protected ScaleDownBed world;
    protected DrainBed pool;
    /** The test's ScaleDown name: its namespace's. */
    protected String name;

    ScaleDownScenario(String prefix, String clusterType) {
        this.prefix = prefix;
        this.clusterType = clusterType;
    }

    /** The class's operator properties, on top of the simulated CloudStack's. */
    protected Map<String, String> operatorProperties() {
        return Map.of();
    }

    @BeforeAll
    void startWorld(TestBed bed) {
        world = new ScaleDownBed(bed, prefix, clusterType, operatorProperties());
    }

    @AfterAll
    void stopWorld() {
        if (world != null) {
            world.close();
        }
    }

    @BeforeEach
    void setUp(TestBed bed) {
        pool = new DrainBed(bed, prefix);
        name = pool.namespace;
        world.simulator().clearCalls();
    }

    /** A worker of this test whose two pods a budget lets none of go: its drain is blocked until the budget goes. */
    protected String workerHeldByABudget() {
        String worker = world.addWorker(pool);
        pool.deployment("web", 2, false);
        pool.budget("web-pdb", "web", 2, null);
        pool.awaitReadyPods("web", 2);
        pool.awaitBudget("web-pdb", 2, 2);
        return worker;
    }

    @AfterEach
    void tearDown() {
        world.simulator().clearFaults();
        world.delete(name);
        pool.cleanUp();
        // A failed job leaves the simulated cluster in Alert, one that never ends in Scaling: the next test starts from Running.
        world.simulator().setClusterState(world.fixture.cluster().id(), "Running");
    }
}
