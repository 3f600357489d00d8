package dev.cks.nodeops.upgrade;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.testbed.TestBed;

/**
 * A NodeUpgrade over 1,000 KWOK workers with 10 pods each (no controller, evicted with force), maxUnavailable 50, on
 * the real control plane with the packaged operator as its own process; the other actor is the kubelet (KWOK, and
 * {@code KubeletUpgradeSimulation} bringing a node back at the target when its Job succeeds). The object the API
 * server serves is sampled every 2 s from creation to the end and held to {@link dev.cks.nodeops.testing.StatusBound}
 * (docs/reliability.md, "Beyond the operator"; results in docs/benchmarks.md, "Status size"). Out of the default run
 * ({@code Benchmark*IT}: minutes of a loaded machine); run with {@code -Dit.test=BenchmarkStatusSizeIT}.
 */
class BenchmarkStatusSizeIT extends NodeUpgradeScenario {
    private static final int NODES = Integer.getInteger("benchmark.nodes", 1000);
    private static final int PODS_PER_NODE = Integer.getInteger("benchmark.podsPerNode", 10);
    private static final int MAX_UNAVAILABLE = Integer.getInteger("benchmark.maxUnavailable", 50);

    BenchmarkStatusSizeIT() {
        super("sizebench");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return NodeUpgradeStatusSizeIT.scriptTrusted(shared);
    }

    @Test
    void aThousandWorkersKeepTheObjectWithinItsBoundThroughout() throws Exception {
        StatusSizeRun.Result result = StatusSizeRun.run(testBed, "size-bench", NodeUpgradeStatusSizeIT.SCRIPT_CONFIGMAP, NODES, PODS_PER_NODE,
                MAX_UNAVAILABLE, Duration.ofMinutes(60));

        Path out = testBed.projectRoot().resolve("target/benchmark-status-size.md");
        StringBuilder samples = new StringBuilder("| at | bytes served | kubectl -o json | progress | nodes in progress |\n|---|---|---|---|---|\n");
        result.samples().forEach(s -> samples.append("| ").append(s.at()).append(" | ").append(s.bytes()).append(" | ").append(s.printed())
                .append(" | ").append(s.progress()).append(" | ").append(s.inProgress()).append(" |\n"));
        Files.writeString(out, result.report() + "\n\n" + samples);
        System.out.println("[benchmark] status size (" + out + "): " + result.report());
        result.assertWithinBound();
    }
}
