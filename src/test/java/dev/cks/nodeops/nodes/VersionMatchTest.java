package dev.cks.nodeops.nodes;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class VersionMatchTest {
    @ParameterizedTest(name = "''{0}'' vs wanted ''{1}'': {2}")
    @CsvSource(delimiter = '|', value = {
            "v1.28.1 | 1.28.1 | true",
            "1.28.1 | v1.28.1 | true",
            "1.28.1 | 1.28.10 | false",
            "1.28.10 | 1.28.1 | false",
            "'  v1.28.1\n' | 1.28.1 | true",
            "v1.33.4+vendor.1 | 1.33.4 | true",
            "v1.33.4 | v1.33.4+vendor.1 | true",
            "v1.33.4+vendor.1 | v1.33.4+other.2 | true",
            "1.34.0-rc.1 | 1.34.0-rc.1 | true",
            "1.34.0-rc.1 | 1.34.0 | false",
            "1.34.0 | 1.34.0-rc.1 | false",
            "1.34.0-rc.1 | 1.34.0-rc.2 | false",
            "v1.34.0-rc.1+build.5 | 1.34.0-rc.1 | true",
            "1.28 | 1.28.0 | false",
            "1.28.01 | 1.28.1 | false",
            "V1.28.1 | 1.28.1 | false",
            "vv1.28.1 | 1.28.1 | false",
            "Kubernetes v1.28.1 | 1.28.1 | false",
            "'' | 1.28.1 | false",
            "1.28.1 | '' | false",
    })
    void exactOnSemver(String reported, String wanted, boolean matches) {
        assertThat(VersionMatch.matches(reported, wanted)).isEqualTo(matches);
    }

    @Test
    void nullsNeverMatch() {
        assertThat(VersionMatch.matches(null, "1.28.1")).isFalse();
        assertThat(VersionMatch.matches("1.28.1", null)).isFalse();
        assertThat(VersionMatch.anyLineMatches(null, "1.28.1")).isFalse();
    }

    @Test
    void normalizeDropsTheVAndBuildMetadataButKeepsThePreRelease() {
        assertThat(VersionMatch.normalize(" v1.34.0-rc.1+vendor.7 ")).hasValue("1.34.0-rc.1");
        assertThat(VersionMatch.normalize("v1.28.1")).hasValue("1.28.1");
        assertThat(VersionMatch.normalize("latest")).isEmpty();
    }

    @Test
    void toolOutputWithStderrLinesMatchesOnTheLineThatIsAVersion() {
        String output = """
                W0501 10:00:00.000000    1234 warnings.go:70] flag --foo is deprecated
                v1.28.1
                """;
        assertThat(VersionMatch.anyLineMatches(output, "1.28.1")).isTrue();
        assertThat(VersionMatch.anyLineMatches(output, "1.28.10")).isFalse();
        assertThat(VersionMatch.anyLineMatches("error: v1.28.1 not found\n", "1.28.1")).as("a sentence that mentions the version is not the version").isFalse();
        assertThat(VersionMatch.anyLineMatches("v1.28.10\r\nv1.28.1+vendor.1", "v1.28.1")).isTrue();
    }

    /** A Continuous NodeUpgrade never takes a node down: which side of the target a kubelet is on, by semver precedence. */
    @ParameterizedTest(name = "{0} against {1}: {2}")
    @CsvSource(delimiter = '|', value = {
            "v1.34.2 | v1.35.9 | -1",
            "v1.35.10 | v1.35.9 | 1",
            "1.35.9 | v1.35.9+vendor.1 | 0",
            "v2.0.0 | v1.99.99 | 1",
            "v1.35.0-rc.1 | v1.35.0 | -1",
            "v1.35.0 | v1.35.0-rc.1 | 1",
            "v1.35.0-rc.2 | v1.35.0-rc.10 | -1",
            "v1.35.0-rc.1 | v1.35.0-rc.1.1 | -1",
            "v1.35.0-alpha.1 | v1.35.0-beta.0 | -1",
            "v1.35.0-1 | v1.35.0-alpha | -1"})
    void versionsCompareBySemverPrecedence(String version, String other, int sign) {
        assertThat(VersionMatch.compare(version, other)).get().extracting(Integer::signum).isEqualTo(sign);
        assertThat(VersionMatch.compare(other, version)).get().extracting(Integer::signum).isEqualTo(-sign);
    }

    @Test
    void aTextThatIsNoVersionHasNoOrder() {
        assertThat(VersionMatch.compare("latest", "v1.35.9")).isEmpty();
        assertThat(VersionMatch.compare("v1.35.9", null)).isEmpty();
    }
}
