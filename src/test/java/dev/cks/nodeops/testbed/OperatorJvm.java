package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The JVM options of the operator processes the tests start: the image's compiler and collector (the Dockerfile's
 * JDK_JAVA_OPTIONS: C1 only, the serial collector) and a class-data archive of the libraries the operator loads
 * until it is ready, as the image has one. A run starts the operator more than a hundred times (every kill point is a
 * new process); each start took about 7 CPU-seconds without them and about 3 with them, on a machine of 2 CPUs
 * where the suite's time is CPU (docs/testing.md). The heap stays the JVM's default: the tests' operators are not
 * the image's, whose heap is sized by the container's limit.
 */
final class OperatorJvm {
    private OperatorJvm() {
    }

    /** The options for the project's packaged application (target/quarkus-app), its archive dumped first if needed. */
    static List<String> options(Path projectRoot, Path java) {
        return List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:SharedArchiveFile=" + archive(projectRoot, java));
    }

    /**
     * Dumps the archive once per package of the application (the forks of a run share it, under a file lock). The JVM
     * checks at each start that the archive's jars are unchanged and otherwise runs without it; a newer
     * quarkus-run.jar means a new package, and a new dump. Synchronized as well: a JVM's threads cannot hold a file's
     * lock side by side (a second lock() throws), and a test may start two operators at once.
     */
    private static synchronized Path archive(Path projectRoot, Path java) {
        Path app = projectRoot.resolve("target/quarkus-app");
        Path dir = projectRoot.resolve("target/operator-cds");
        Path archive = dir.resolve("operator.jsa");
        try {
            Files.createDirectories(dir);
            try (FileChannel lockFile = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock lock = lockFile.lock()) {
                if (Files.exists(archive) && !Files.getLastModifiedTime(archive).toInstant()
                        .isBefore(Files.getLastModifiedTime(app.resolve("quarkus-run.jar")).toInstant())) {
                    return archive;
                }
                Path classList = dir.resolve("classlist");
                Files.write(classList, librariesOnly(Files.readAllLines(projectRoot.resolve("hack/image.classlist")), app));
                Path log = dir.resolve("dump.log");
                Process dump = new ProcessBuilder(java.toString(), "-XX:+UseSerialGC", "-Xshare:dump", "-XX:SharedClassListFile=" + classList,
                        "-XX:SharedArchiveFile=" + archive, "-cp", app.resolve("quarkus-run.jar").toString())
                        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
                if (!dump.waitFor(2, TimeUnit.MINUTES) || dump.exitValue() != 0) {
                    dump.destroyForcibly();
                    Files.deleteIfExists(archive);
                    throw new IllegalStateException("the operator's class-data dump failed; see " + log);
                }
                return archive;
            }
        } catch (IOException e) {
            throw new IllegalStateException("could not dump the operator's class-data archive: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while dumping the operator's class-data archive", e);
        }
    }

    /**
     * The image's class list (hack/image.classlist: NAME id: N [super: N] [interfaces: N...] source: /deployments/...)
     * without the application's own classes (app/, and what Quarkus generated or transformed from them) and without
     * every class resting on one of them, its paths moved to {@code app}. The list records each class's supertypes as
     * they were at the training, and this JVM refuses the whole list when one of ours has changed since (the image's
     * newer JDK skips such a class); ours load from the jar as they would without an archive. Ids are given in load
     * order, so a class's supertypes come before it and one pass finds every class resting on ours.
     */
    static List<String> librariesOnly(List<String> classList, Path app) {
        Set<String> ours = new HashSet<>();
        List<String> kept = new ArrayList<>();
        for (String line : classList) {
            if (line.startsWith("#") || line.startsWith("@") || line.isBlank()) {
                kept.add(line);
                continue;
            }
            String[] words = line.trim().split("\\s+");
            String id = null;
            boolean skip = false;
            for (int i = 1; i < words.length; i++) {
                switch (words[i]) {
                    case "id:" -> id = words[i + 1];
                    case "super:" -> skip |= ours.contains(words[i + 1]);
                    case "interfaces:" -> {
                        for (int j = i + 1; j < words.length && words[j].matches("\\d+"); j++) {
                            skip |= ours.contains(words[j]);
                        }
                    }
                    case "source:" -> skip |= words[i + 1].matches("/deployments/(app/|quarkus/(generated|transformed)-bytecode\\.jar).*");
                    default -> { }
                }
            }
            if (skip) {
                ours.add(id);
            } else {
                kept.add(line.replace("source: /deployments/", "source: " + app + "/"));
            }
        }
        return kept;
    }
}
