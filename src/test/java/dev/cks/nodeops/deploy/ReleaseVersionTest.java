package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * One version for the operator (pom.xml), the chart and its appVersion, and so the image tag (values.yaml
 * leaves image.tag to the appVersion, hack/image.sh tags with it): a rebuild of a new version never reuses an
 * older tag. Every image or archive name the docs and scripts show carries that version.
 */
class ReleaseVersionTest {
    /** The project's own version: the first {@code <version>} after its artifactId, before any dependency's. */
    private static final Pattern POM_VERSION = Pattern.compile("<artifactId>cks-node-operator</artifactId>\\s*<version>([^<]+)</version>");
    private static final Pattern CHART_VERSION = Pattern.compile("(?m)^version: *\"?([^\"\\s]+)\"?\\s*$");
    private static final Pattern IMAGE_TAG = Pattern.compile("(?m)^image:\\n(?:  .*\\n)*?  tag: *\"([^\"]*)\"");
    /** An image or an image archive of ours with a version: {@code cks-node-operator:1.2.3}, {@code cks-node-operator-1.2.3.oci.tar}. */
    private static final Pattern NAMED_VERSION = Pattern.compile("cks-node-operator[:-](\\d+\\.\\d+\\.\\d+)\\b");

    @Test
    void thePomTheChartAndItsAppVersionAreOneVersion() {
        String version = ReleaseVersion.current();

        assertThat(ReleaseVersion.field(POM_VERSION, Path.of("pom.xml"))).as("pom.xml's version").isEqualTo(version);
        assertThat(ReleaseVersion.field(CHART_VERSION, ReleaseVersion.CHART)).as("the chart's version").isEqualTo(version);
        assertThat(ReleaseVersion.field(IMAGE_TAG, Path.of("deploy/helm/cks-node-operator/values.yaml")))
                .as("values.yaml's image.tag: empty, so the image is the appVersion's").isEmpty();
        assertThat(ReleaseVersion.field(Pattern.compile("(appVersion)"), Path.of("hack/image.sh"))).as("hack/image.sh tags with the appVersion")
                .isNotEmpty();
    }

    @Test
    void everyImageTheDocsAndScriptsNameIsOfThisVersion() throws IOException {
        String version = ReleaseVersion.current();
        Map<String, String> other = new TreeMap<>();
        for (Path file : namingImages()) {
            List<String> lines = Files.readAllLines(file);
            for (int i = 0; i < lines.size(); i++) {
                Matcher named = NAMED_VERSION.matcher(lines.get(i));
                while (named.find()) {
                    if (!named.group(1).equals(version)) {
                        other.put(file + ":" + (i + 1), lines.get(i).strip());
                    }
                }
            }
        }
        assertThat(other).as("images or archives named with another version than %s", version).isEmpty();
    }

    /** README, docs, the Dockerfile, the scripts and the chart; not CHANGELOG.md, which tells of earlier versions. */
    private static List<Path> namingImages() throws IOException {
        try (Stream<Path> docs = Files.walk(Path.of("docs")); Stream<Path> hack = Files.walk(Path.of("hack"));
                Stream<Path> chart = Files.walk(Path.of("deploy/helm/cks-node-operator"))) {
            return Stream.of(Stream.of(Path.of("README.md"), Path.of("Dockerfile")), docs, hack, chart).flatMap(s -> s)
                    .filter(Files::isRegularFile).sorted().toList();
        }
    }
}
