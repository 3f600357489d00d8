package dev.cks.nodeops.operation;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

class KillPointTableTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z0-9.@-]+)` \\|");

    @Test
    void docsReliabilityListsEveryKillPointAndNoOther() throws IOException {
        String doc = Files.readString(Path.of("docs/reliability.md"));
        String section = doc.substring(doc.indexOf("## Kill points"), doc.indexOf("## Fault matrix"));
        List<String> listed = section.lines().map(ROW::matcher).filter(Matcher::find).map(m -> m.group(1)).toList();

        assertThat(listed).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(Arrays.stream(KillPoint.values()).map(KillPoint::pointName).toList());
        assertThat(listed).as("the issue asks for at least 28").hasSizeGreaterThanOrEqualTo(28);
    }

    @Test
    void anArmedPointActsOnlyAtItsOccurrenceAndADisarmedOneNever() throws Exception {
        AtomicInteger reached = new AtomicInteger();
        try (AutoCloseable armed = KillPoint.armInProcess(KillPoint.SCALEDOWN_CORDONED, 2, reached::incrementAndGet)) {
            KillPoint.SCALEDOWN_CORDONED.reached();
            KillPoint.SCALEDOWN_LOCKED.reached();
            assertThat(reached).hasValue(0);
            KillPoint.SCALEDOWN_CORDONED.reached();
            assertThat(reached).hasValue(1);
            KillPoint.SCALEDOWN_CORDONED.reached();
            assertThat(reached).as("only the second time").hasValue(1);
        }
        KillPoint.SCALEDOWN_CORDONED.reached();
        assertThat(reached).hasValue(1);
    }

    @Test
    void aNameThatIsNoKillPointIsFoundNowhereSoATypoCannotPassForAKill() {
        assertThat(KillPoint.named("scaledown.scale.answered")).contains(KillPoint.SCALEDOWN_SCALE_ANSWERED);
        assertThat(KillPoint.named("scaledown.scale.anwsered")).isEmpty();
    }
}
