package dev.cks.nodeops.nodes;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether a reported version is the wanted one: exact on semver (`1.28.1` is not `1.28.10`),
 * ignoring a leading `v`, surrounding whitespace and `+build` metadata; pre-release parts count.
 */
public final class VersionMatch {
    // Semver 2.0 core and pre-release; build metadata is matched only to be dropped.
    private static final Pattern SEMVER = Pattern.compile(
            "v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?");

    private VersionMatch() {
    }

    /** The version without `v` and build metadata, e.g. `1.34.0-rc.1`; empty when the text is not one version. */
    public static Optional<String> normalize(String text) {
        if (text == null) {
            return Optional.empty();
        }
        Matcher matcher = SEMVER.matcher(text.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        String core = matcher.group(1) + "." + matcher.group(2) + "." + matcher.group(3);
        return Optional.of(matcher.group(4) == null ? core : core + "-" + matcher.group(4));
    }

    public static boolean matches(String reported, String wanted) {
        Optional<String> want = normalize(wanted);
        return want.isPresent() && want.equals(normalize(reported));
    }

    /**
     * For a tool's output, which may carry warnings on stderr: true when any line, on its own, is
     * the wanted version. Lines that are not a version are ignored rather than failing the match.
     */
    public static boolean anyLineMatches(String output, String wanted) {
        return output != null && output.lines().anyMatch(line -> matches(line, wanted));
    }
}
