package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * No two capability packages ({@code dev.cks.nodeops.<package>}) depend on each other, directly or around a
 * loop: a reader finds a capability in one package only while each package can be read without the ones
 * that use it. Dependencies are read from the sources: imports and fully qualified names in code.
 */
class PackageCyclesTest {
    private static final Path SOURCES = Path.of("src/main/java");
    private static final Pattern PACKAGE = Pattern.compile("^package dev\\.cks\\.nodeops\\.([a-z][a-z0-9_]*)", Pattern.MULTILINE);
    private static final Pattern REFERENCE = Pattern.compile("\\bdev\\.cks\\.nodeops\\.([a-z][a-z0-9_]*)\\.");
    /** Comments and literals: a {@code {@link}} or a name in a string is no dependency, and a string may hold a comment's marks. */
    private static final Pattern NOT_CODE = Pattern.compile("\"\"\".*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\])'|/\\*.*?\\*/|//[^\\n]*",
            Pattern.DOTALL);

    @Test
    void noPackageOfTheOperatorDependsOnItselfAroundALoop() throws IOException {
        Map<String, Map<String, Set<String>>> dependencies = dependencies(SOURCES);
        assertThat(dependencies).as("packages read from %s", SOURCES).containsKeys("drain", "nodes", "operation");

        List<String> cycle = cycle(graphOf(dependencies));

        assertThat(cycle).as("a package cycle: %s", describe(cycle, dependencies)).isEmpty();
    }

    @Test
    void aLoopIsFoundAndNamedAroundIt() {
        Map<String, Set<String>> looped = Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
        Map<String, Set<String>> layered = Map.of("a", Set.of("b", "c"), "b", Set.of("c"), "c", Set.of());

        assertThat(cycle(looped)).containsExactly("a", "b", "c", "a");
        assertThat(cycle(Map.of("a", Set.of("a")))).as("a package referring to itself is no loop").isEmpty();
        assertThat(cycle(layered)).isEmpty();
    }

    /** Per package: the operator's other packages its code refers to, each with the files that do. */
    private static Map<String, Map<String, Set<String>>> dependencies(Path sources) throws IOException {
        Map<String, Map<String, Set<String>>> dependencies = new TreeMap<>();
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String code = NOT_CODE.matcher(Files.readString(file)).replaceAll(" ");
                Matcher declared = PACKAGE.matcher(code);
                if (!declared.find()) {
                    continue;
                }
                Map<String, Set<String>> ofPackage = dependencies.computeIfAbsent(declared.group(1), p -> new TreeMap<>());
                Matcher reference = REFERENCE.matcher(code);
                while (reference.find()) {
                    if (!reference.group(1).equals(declared.group(1))) {
                        ofPackage.computeIfAbsent(reference.group(1), p -> new TreeSet<>()).add(sources.relativize(file).toString());
                    }
                }
            }
        }
        return dependencies;
    }

    private static Map<String, Set<String>> graphOf(Map<String, Map<String, Set<String>>> dependencies) {
        Map<String, Set<String>> graph = new TreeMap<>();
        dependencies.forEach((from, to) -> graph.put(from, to.keySet()));
        return graph;
    }

    /** A loop of packages, first package repeated at its end; empty when there is none. Packages are tried in name order. */
    static List<String> cycle(Map<String, Set<String>> graph) {
        Set<String> done = new HashSet<>();
        for (String start : new TreeSet<>(graph.keySet())) {
            List<String> found = cycleFrom(start, graph, new ArrayList<>(), done);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    /** Depth first from {@code at}; {@code path} holds the packages entered and not yet left. */
    private static List<String> cycleFrom(String at, Map<String, Set<String>> graph, List<String> path, Set<String> done) {
        int onPath = path.indexOf(at);
        if (onPath >= 0) {
            List<String> loop = new ArrayList<>(path.subList(onPath, path.size()));
            loop.add(at);
            return loop;
        }
        if (done.contains(at)) {
            return List.of();
        }
        path.add(at);
        for (String next : new TreeSet<>(graph.getOrDefault(at, Set.of()))) {
            if (!next.equals(at)) {
                List<String> found = cycleFrom(next, graph, path, done);
                if (!found.isEmpty()) {
                    return found;
                }
            }
        }
        path.remove(path.size() - 1);
        done.add(at);
        return List.of();
    }

    /** The loop with the files behind each of its steps, e.g. {@code drain -> nodes (dev/cks/nodeops/drain/ReplacementPlacement.java)}. */
    private static String describe(List<String> cycle, Map<String, Map<String, Set<String>>> dependencies) {
        List<String> steps = new ArrayList<>();
        for (int i = 0; i + 1 < cycle.size(); i++) {
            String from = cycle.get(i);
            String to = cycle.get(i + 1);
            steps.add(from + " -> " + to + " (" + String.join(", ", dependencies.get(from).get(to)) + ")");
        }
        return steps.isEmpty() ? "none" : String.join("; ", steps) + "; break one of these dependencies";
    }
}
