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
     * Semver precedence of two versions (build metadata ignored): negative when {@code a} is older, 0 when they are the
     * same version, positive when {@code a} is newer; empty when either is not one version. A pre-release is older than
     * its release (`1.34.0-rc.1` &lt; `1.34.0`); its identifiers compare numerically when both are numbers, else as text.
     */
    public static Optional<Integer> compare(String a, String b) {
        Optional<String> left = normalize(a);
        Optional<String> right = normalize(b);
        if (left.isEmpty() || right.isEmpty()) {
            return Optional.empty();
        }
        String[] l = left.get().split("-", 2);
        String[] r = right.get().split("-", 2);
        String[] lCore = l[0].split("\\.");
        String[] rCore = r[0].split("\\.");
        for (int i = 0; i < 3; i++) {
            int byPart = new java.math.BigInteger(lCore[i]).compareTo(new java.math.BigInteger(rCore[i]));
            if (byPart != 0) {
                return Optional.of(byPart);
            }
        }
        if (l.length == 1 || r.length == 1) {
            return Optional.of(Integer.compare(r.length, l.length));
        }
        String[] lPre = l[1].split("\\.");
        String[] rPre = r[1].split("\\.");
        for (int i = 0; i < Math.min(lPre.length, rPre.length); i++) {
            boolean lNumber = lPre[i].matches("\\d+");
            boolean rNumber = rPre[i].matches("\\d+");
            int byPart = lNumber && rNumber ? new java.math.BigInteger(lPre[i]).compareTo(new java.math.BigInteger(rPre[i]))
                    : lNumber != rNumber ? (lNumber ? -1 : 1) : lPre[i].compareTo(rPre[i]);
            if (byPart != 0) {
                return Optional.of(byPart);
            }
        }
        return Optional.of(Integer.compare(lPre.length, rPre.length));
    }

    /**
     * For a tool's output, which may carry warnings on stderr: true when any line, on its own, is
     * the wanted version. Lines that are not a version are ignored rather than failing the match.
     */
    public static boolean anyLineMatches(String output, String wanted) {
        return output != null && output.lines().anyMatch(line -> matches(line, wanted));
    }
}
