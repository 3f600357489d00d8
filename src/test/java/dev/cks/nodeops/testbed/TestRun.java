package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One failsafe run of the ITs as the pom sets it up: several forks, each with a bed of its own
 * ({@code <TESTBED_CLUSTER>-<fork>}), then the judges ({@link JudgesRunLast}) in a JVM of their own that
 * judge what every fork did. What the judges need from the forks — which beds ran, which CloudStack keys
 * and Secrets the fixtures handed out — is written under {@code target/testbed-run/<run>/}, one value a
 * line. Outside such a run (an IDE, the demo) nothing is written and the bed is the one of
 * TESTBED_CLUSTER, as before.
 */
public final class TestRun {
    /** Set by the pom for each run (the build's time stamp): the forks and the judges of one build share it. */
    static final String RUN = System.getProperty("testbed.run", "");
    /** The fork's number (surefire.forkNumber) in the default execution; empty elsewhere. */
    static final String FORK = System.getProperty("testbed.fork", "");
    /** The judges' execution: it starts no bed, it uses the forks' beds and tears them down at the end. */
    static final boolean JUDGES = Boolean.getBoolean("testbed.judges");
    /** A fork keeps its bed for the judges unless they do not run this time (-Dit.test, -DskipITs; see the pom). */
    static final boolean JUDGED = !FORK.isEmpty() && !Boolean.getBoolean("testbed.judges-skipped");

    static final String BEDS = "beds";
    static final String GRANTED_SECRETS = "granted-secrets";
    static final String CLOUDSTACK_KEYS = "cloudstack-keys";

    private TestRun() {
    }

    /** True while the forks of a run write down what the judges will need. */
    static boolean recording() {
        return !RUN.isEmpty();
    }

    /** The bed a JVM of this run starts: TESTBED_CLUSTER, with the fork's number in a forked run. */
    static String bedName(String base) {
        return FORK.isEmpty() ? base : base + "-" + FORK;
    }

    /** Adds a line to one of the run's lists (appends of one short line from several JVMs do not interleave). */
    static synchronized void record(String list, String value) {
        if (!recording()) {
            return;
        }
        try {
            Path file = file(list);
            Files.createDirectories(file.getParent());
            Files.writeString(file, value + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("could not record " + list + " of test run " + RUN, e);
        }
    }

    /** What every JVM of this run recorded in the list, in order, each value once. */
    static Set<String> recorded(String list) {
        if (!recording() || !Files.exists(file(list))) {
            return Set.of();
        }
        try {
            List<String> lines = Files.readAllLines(file(list), StandardCharsets.UTF_8);
            return new LinkedHashSet<>(lines.stream().filter(line -> !line.isBlank()).toList());
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + list + " of test run " + RUN, e);
        }
    }

    /** This JVM's values and what every JVM of the run recorded in the list. */
    static Set<String> withRecorded(Set<String> own, String list) {
        Set<String> all = new LinkedHashSet<>(own);
        all.addAll(recorded(list));
        return Set.copyOf(all);
    }

    private static Path file(String list) {
        return TestBed.locateProjectRoot().resolve("target/testbed-run").resolve(RUN).resolve(list);
    }
}
