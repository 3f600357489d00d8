package dev.cks.nodeops.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The README's time for the whole suite is the latest one docs/testing.md measured (the last "Maven's
 * total" there), rounded to the nearest 5 minutes: a README figure that contradicts the measurements
 * misleads whoever plans a run by it.
 */
class SuiteTimeDocTest {
    private static final Pattern README_FIGURE = Pattern.compile("Run all tests \\([^)]*\\): about (\\d+) minutes");
    private static final Pattern MEASURED = Pattern.compile("Maven's total: \\*\\*(\\d+):(\\d\\d)\\*\\*");

    @Test
    void theReadmeGivesTheSuiteTimeDocsTestingMeasuredLast() throws IOException {
        Matcher figure = README_FIGURE.matcher(Files.readString(Path.of("README.md")).replace('\n', ' '));
        assertThat(figure.find()).as("README.md says \"Run all tests (…): about N minutes\"").isTrue();
        List<Integer> measuredSeconds = MEASURED.matcher(Files.readString(Path.of("docs/testing.md"))).results()
                .map(m -> Integer.parseInt(m.group(1)) * 60 + Integer.parseInt(m.group(2))).toList();
        assertThat(measuredSeconds).as("\"Maven's total\" measurements in docs/testing.md").isNotEmpty();
        int latestMinutes = Math.round(measuredSeconds.get(measuredSeconds.size() - 1) / 60f);
        assertThat(Integer.parseInt(figure.group(1))).as("README's suite time against docs/testing.md's latest, %d minutes", latestMinutes)
                .isEqualTo(Math.round(latestMinutes / 5f) * 5);
    }
}
