package dev.cks.nodeops.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The project's one version, as the chart's appVersion states it (hack/image.sh tags the image with it). */
public final class ReleaseVersion {
    static final Path CHART = Path.of("deploy/helm/cks-node-operator/Chart.yaml");
    private static final Pattern APP_VERSION = Pattern.compile("(?m)^appVersion: *\"?([^\"\\s]+)\"?\\s*$");

    private ReleaseVersion() {
    }

    public static String current() {
        return field(APP_VERSION, CHART);
    }

    /** The first group of the pattern in the file; fails naming both when it is not there. */
    static String field(Pattern pattern, Path file) {
        try {
            Matcher matcher = pattern.matcher(Files.readString(file));
            if (!matcher.find()) {
                throw new IllegalStateException(file + " has no " + pattern.pattern());
            }
            return matcher.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
