package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.scaledown.ScaleDownSpec.Removal;
import dev.cks.nodeops.testing.CapturedExample;

/**
 * The console examples in docs/troubleshooting.md are transcripts of real runs, and stay so: each
 * test here runs the situation on the bed, captures what a user's kubectl shows, writes the
 * transcript to target/troubleshooting/ and checks the doc's example against it
 * ({@link CapturedExample}: names, ages and pod hashes may differ, everything else must not).
 */
class TroubleshootingExamplesIT extends ScaleDownScenario {
    private static final Duration WITHIN = Duration.ofSeconds(120);
    private static final Path DOC = Path.of("docs/troubleshooting.md");

    TroubleshootingExamplesIT() {
        super("shop", "CloudManaged");
    }

    @Test
    void aDrainBlockedByAPodDisruptionBudget() throws IOException {
        String held = world.addWorker(pool);
        world.addWorker(pool);
        // One pod on each worker: the example shows a drain held by one pod of a budget whose other pod runs elsewhere.
        pool.spreadDeployment("web", 2);
        pool.budget("web-pdb", "web", 2, null);
        pool.awaitReadyPods("web", 2);
        pool.awaitBudget("web-pdb", 2, 2);
        name = "remove-" + held;

        world.create(name, List.of(held), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(300, 2));
        world.await(name, "blocked", sd -> sd.getStatus() != null && sd.getStatus().getMessage() != null
                && sd.getStatus().getMessage().contains("blocked for"), WITHIN);
        Awaitility.await("the DrainBlocked event").atMost(Duration.ofSeconds(30))
                .until(() -> world.bed.eventsOf(name).stream().anyMatch(e -> "DrainBlocked".equals(e.getReason())));

        String transcript = run("kubectl", "get", "sd", name)
                + run("kubectl", "get", "sd", name, "-o", "jsonpath={.status.nodes[0].drain.blockedBy}")
                + run("kubectl", "describe", "sd", name);
        check("drain-blocked", transcript);
    }

    @Test
    void keysCloudStackRejects() throws Exception {
        String node = world.addWorker(pool);
        world.addWorker(pool);
        name = "remove-" + node;
        try (AutoCloseable rotatedWrongly = world.fixture.wrongSecretKey()) {
            world.create(name, List.of(node), null, Removal.CloudStackScale, 600, ScaleDownBed.drain(300, 2));
            world.await(name, "waiting for CloudStack", sd -> sd.getStatus() != null && sd.getStatus().getMessage() != null
                    && sd.getStatus().getMessage().startsWith("CloudStack could not be asked"), WITHIN);

            String transcript = run("kubectl", "get", "sd", name)
                    + run("kubectl", "describe", "sd", name);
            check("cloudstack-401", transcript);
            assertThat(world.isUnschedulable(node)).as("nothing was cordoned").isFalse();
        }
    }

    /** `$ command` and its output, as a shell shows it. */
    private String run(String tool, String... args) {
        String output = world.bed.tool(tool, args);
        StringBuilder line = new StringBuilder("$ ").append(tool);
        for (String arg : args) {
            line.append(' ').append(arg.contains("{") ? "'" + arg + "'" : arg);
        }
        return line + "\n" + output + (output.endsWith("\n") ? "" : "\n");
    }

    private static void check(String example, String transcript) throws IOException {
        Path captured = Path.of("target/troubleshooting", example + ".txt");
        Files.createDirectories(captured.getParent());
        Files.writeString(captured, transcript);
        String documented = CapturedExample.in(Files.readString(DOC), example);
        if (!CapturedExample.matches(documented, transcript)) {
            fail(DOC + "'s example '" + example + "' is not what a run shows now; this run's transcript is in " + captured
                    + " (paste the parts that matter, '...' for the rest):\n" + transcript);
        }
        assertThat(documented).as("the example shows more than its command lines").contains("\n  ");
    }
}
