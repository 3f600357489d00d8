package dev.cks.nodeops.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A console example in the docs that is the transcript of a real run. In Markdown it is the fenced
 * block right after a line {@code <!-- example NAME: ... -->}; a line {@code ...} in it stands for any
 * number of lines of the run left out. It matches a run's transcript when every other line is there,
 * in order, once what differs between two runs of the same situation is set aside: the bed's
 * generated names, pod hashes, UIDs, timestamps, ages and durations, resource versions and column
 * padding (which follows the names' widths).
 */
public final class CapturedExample {
    private static final String ELIDED = "...";
    private static final List<Replacement> BETWEEN_RUNS = List.of(
            new Replacement("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?Z", "<time>"),
            new Replacement("\\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\\b", "<uid>"),
            // The bed's names: namespaces <prefix>-<n>-<hex>, CKS-like nodes <cluster>-node-<hex>.
            new Replacement("\\b([a-z]+)-node-[0-9a-f]+\\b", "$1-node-<id>"),
            new Replacement("\\b([a-z]+)-\\d+-[0-9a-f]+\\b", "$1-<n>-<id>"),
            // A Deployment's pods: <name>-<template hash>-<suffix>.
            new Replacement("-[a-z0-9]{8,10}-[a-z0-9]{5}\\b", "-<pod>"),
            new Replacement("(Resource Version:)\\s*\\d+", "$1 <n>"),
            new Replacement("\\(x\\d+ over [0-9dhms.]+\\)", "(x<n> over <age>)"),
            new Replacement("\\b(?:\\d+(?:\\.\\d+)?(?:ms|[dhms]))+\\b", "<age>"),
            new Replacement("\\s+", " "));

    private CapturedExample() {
    }

    /** The example called {@code name} in a Markdown text; fails if there is none. */
    public static String in(String markdown, String name) {
        List<String> lines = markdown.lines().toList();
        String marker = "<!-- example " + name + ":";
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(marker)) {
                if (i + 1 >= lines.size() || !lines.get(i + 1).startsWith("```")) {
                    throw new IllegalArgumentException("the example " + name + " is not followed by a fenced block");
                }
                List<String> block = new ArrayList<>();
                for (int j = i + 2; j < lines.size() && !lines.get(j).startsWith("```"); j++) {
                    block.add(lines.get(j));
                }
                return String.join("\n", block) + "\n";
            }
        }
        throw new IllegalArgumentException("no example " + name + " (a line starting with '" + marker + "')");
    }

    /** Whether the documented example is this transcript, leaving out only what differs between runs and its '...' lines. */
    public static boolean matches(String documented, String transcript) {
        StringBuilder expected = new StringBuilder();
        for (String line : documented.lines().toList()) {
            expected.append(line.strip().equals(ELIDED) ? "(?:[^\\n]*\\n)*?" : Pattern.quote(betweenRuns(line)) + "\\n");
        }
        StringBuilder actual = new StringBuilder();
        transcript.lines().forEach(line -> actual.append(betweenRuns(line)).append('\n'));
        return Pattern.compile(expected.toString()).matcher(actual).matches();
    }

    static String betweenRuns(String line) {
        String result = line;
        for (Replacement replacement : BETWEEN_RUNS) {
            result = replacement.pattern.matcher(result).replaceAll(replacement.with);
        }
        return result.strip();
    }

    private record Replacement(Pattern pattern, String with) {
        Replacement(String regex, String with) {
            this(Pattern.compile(regex), with);
        }
    }
}
