package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The CRDs users install (deploy/crds and the Helm chart) must be exactly what the build generates
 * from the Java model. Runs after `package`, which generates target/kubernetes/. To refresh:
 * `./mvnw package -DskipTests && cp target/kubernetes/*.nodeops.cks.dev-v1.yml deploy/crds/`.
 */
class CrdDriftIT {
    @ParameterizedTest
    @ValueSource(strings = {"nodeupgrades", "scaledowns", "vmmapaudits", "drainreports"})
    void committedCrdMatchesGenerated(String plural) throws IOException {
        String file = plural + ".nodeops.cks.dev-v1.yml";
        Path generated = Path.of("target/kubernetes", file);
        assertThat(generated).as("the build generates %s", generated).exists();
        for (Path committed : committedCopies(file)) {
            assertThat(Files.readString(committed))
                    .as("%s differs from the generated %s; copy it over (see this test's comment)", committed, generated)
                    .isEqualTo(Files.readString(generated));
        }
    }

    private static List<Path> committedCopies(String file) {
        Path chart = Path.of("deploy/helm/cks-node-operator/crds", file);
        return Files.exists(chart.getParent()) ? List.of(Path.of("deploy/crds", file), chart) : List.of(Path.of("deploy/crds", file));
    }
}
