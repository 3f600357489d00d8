package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The class list of the image's class-data archive (hack/image.classlist, written by `hack/image.sh --train`)
 * names only jars the packaged application has. A dependency or version change without a new training fails
 * here, in the build, and not first when someone builds the image (which refuses a stale list as well).
 */
class ImageClassListIT {
    private static final Path APP = Path.of("target/quarkus-app");
    private static final Pattern SOURCE = Pattern.compile(" source: /deployments/(\\S+)");

    @Test
    void everyJarTheClassListNamesIsInThePackagedApplication() throws IOException {
        assertThat(APP.resolve("quarkus-run.jar")).as("the packaged application (failsafe runs after package)").exists();
        List<String> jars = Files.readAllLines(Path.of("hack/image.classlist")).stream().map(SOURCE::matcher).filter(Matcher::find)
                .map(m -> m.group(1)).distinct().toList();
        assertThat(jars).as("jars of Quarkus's class loader the class list loads classes from").anyMatch(jar -> jar.startsWith("lib/main/"))
                .anyMatch(jar -> jar.startsWith("app/"));
        assertThat(jars).allSatisfy(jar -> assertThat(APP.resolve(jar))
                .as("%s, named by hack/image.classlist: run hack/image.sh --train after changing dependencies", jar).exists());
    }
}
