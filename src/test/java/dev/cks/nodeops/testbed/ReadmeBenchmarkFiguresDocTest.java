package dev.cks.nodeops.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The README's performance figures are the ones docs/benchmarks.md measured: its table "What the README
 * quotes" names, for each figure, the README's words and the words of the measurement, and the figure is
 * that measurement rounded. A README figure that no measurement backs, or that an older run gave, tells an
 * owner sizing a cluster something this operator does not do.
 */
class ReadmeBenchmarkFiguresDocTest {
    private static final String TABLE_HEADING = "## What the README quotes";
    private static final Pattern NUMBER = Pattern.compile("\\d[\\d,]*(?:\\.\\d+)?");
    /** A figure as the README gives one: a number and what it counts or measures. */
    private static final Pattern README_FIGURE = Pattern.compile("\\d[\\d,]*(?:\\.\\d+)? ?(?:s|ms|MiB|MB|GiB|classes)\\b");

    record Quote(String readmeSays, String figure, String measured) {
    }

    @Test
    void everyQuotedFigureIsInTheReadmeAndIsItsMeasurementRounded() throws IOException {
        String readme = normalized(Files.readString(Path.of("README.md")));
        String measurements = normalized(withoutTable(Files.readString(Path.of("docs/benchmarks.md"))));
        List<Quote> quotes = quotes();
        assertThat(quotes).as("rows of docs/benchmarks.md's table \"%s\"", TABLE_HEADING).isNotEmpty();
        for (Quote quote : quotes) {
            assertThat(readme).as("README.md says \"%s\"", quote.readmeSays()).contains(quote.readmeSays());
            assertThat(quote.readmeSays()).as("the README's words hold the figure").contains(quote.figure());
            assertThat(measurements).as("docs/benchmarks.md measured \"%s\"", quote.measured()).contains(quote.measured());
            List<String> numbers = NUMBER.matcher(quote.measured()).results().map(MatchResult::group).toList();
            assertThat(numbers).as("a number in \"%s\"", quote.measured()).isNotEmpty();
            assertThat(roundsTo(numbers.get(numbers.size() - 1), quote.figure()))
                    .as("%s is the measurement \"%s\" rounded", quote.figure(), quote.measured()).isTrue();
        }
    }

    @Test
    void everyFigureTheReadmeCitesTheBenchmarksForIsInTheTable() throws IOException {
        List<Quote> quotes = quotes();
        List<String> citing = Arrays.stream(Files.readString(Path.of("README.md")).split("\\n\\s*\\n"))
                .map(ReadmeBenchmarkFiguresDocTest::normalized).filter(p -> p.contains("docs/benchmarks.md")).toList();
        assertThat(citing).as("README paragraphs citing docs/benchmarks.md").isNotEmpty();
        for (String paragraph : citing) {
            README_FIGURE.matcher(paragraph).results().map(MatchResult::group).forEach(figure ->
                    assertThat(quotes).as("the README's \"%s\" (in a paragraph citing docs/benchmarks.md) is a row of its table", figure)
                            .anyMatch(q -> q.readmeSays().contains(figure)));
        }
    }

    @Test
    void roundingFollowsTheFiguresOwnPrecision() {
        assertThat(roundsTo("2.88", "2.9")).isTrue();
        assertThat(roundsTo("2.94", "2.9")).isTrue();
        assertThat(roundsTo("2.96", "2.9")).isFalse();
        assertThat(roundsTo("8,797", "8,800")).isTrue();
        assertThat(roundsTo("8,700", "8,800")).isFalse();
        assertThat(roundsTo("89", "92")).isFalse();
    }

    /** True when measured, rounded to the figure's last significant digit, is the figure. */
    static boolean roundsTo(String measured, String figure) {
        BigDecimal value = new BigDecimal(measured.replace(",", ""));
        BigDecimal shown = new BigDecimal(figure.replace(",", ""));
        BigDecimal unit = shown.scale() > 0 ? BigDecimal.ONE.movePointLeft(shown.scale())
                : BigDecimal.ONE.movePointRight(trailingZeros(shown.toBigInteger().toString()));
        return value.subtract(shown).abs().compareTo(unit.divide(BigDecimal.valueOf(2))) <= 0;
    }

    private static int trailingZeros(String digits) {
        int zeros = 0;
        for (int i = digits.length() - 1; i > 0 && digits.charAt(i) == '0'; i--) {
            zeros++;
        }
        return zeros;
    }

    private static List<Quote> quotes() throws IOException {
        String benchmarks = Files.readString(Path.of("docs/benchmarks.md"));
        return table(benchmarks).lines().filter(l -> l.startsWith("|") && !l.startsWith("|---") && !l.startsWith("| README says"))
                .map(l -> l.substring(1, l.lastIndexOf('|')).split("\\|"))
                .map(cells -> new Quote(cells[0].strip(), cells[1].strip(), cells[2].strip())).toList();
    }

    private static String table(String benchmarks) {
        int start = benchmarks.indexOf(TABLE_HEADING);
        assertThat(start).as("docs/benchmarks.md has the section \"%s\"", TABLE_HEADING).isNotNegative();
        int end = benchmarks.indexOf("\n## ", start + TABLE_HEADING.length());
        return benchmarks.substring(start, end < 0 ? benchmarks.length() : end);
    }

    private static String withoutTable(String benchmarks) {
        return benchmarks.replace(table(benchmarks), "");
    }

    private static String normalized(String text) {
        return text.replaceAll("\\s+", " ");
    }
}
