package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.operation.CloudStackWait;
import dev.cks.nodeops.operation.NodeOperationStatus;
import dev.cks.nodeops.operation.Stage;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;

/**
 * Every event reason and condition type the docs name is one the code uses. Reasons and types are read
 * from the code itself: the constants of {@link Conditions}, the types the sources pass to
 * {@code Conditions.set} and the reasons they pass to {@link EventRecorder} or record a wait under (a
 * string literal, or a constant whose value the sources define), so the test
 * follows the code when its vocabulary changes. In the docs it reads `kubectl describe` output in
 * console blocks (`Normal|Warning  <Reason>` events, `<Type>  True|False|Unknown  <Reason>` conditions)
 * and prose such as "a Warning event (reason `X`)", "the `X` event", "condition `X`". The Events table of
 * docs/troubleshooting.md lists every reason the code records, and no other; its kind column names `Node`
 * for exactly the reasons also recorded on Nodes.
 */
class VocabularyDocTest {
    /**
     * An event recorded, a refusal (a Warning under its reason), or a wait (a Waiting condition and an event under its
     * reason: recorder.waiting, a work gate's Hold, a planner's Wait).
     */
    private static final Pattern EVENT_CALL = Pattern.compile("(?:\\.(?:normal|warning|event|waiting)|\\brefused|new (?:Hold|Wait))\\(\\s*(?:\\w+\\s*,\\s*)?(\"(\\w+)\"|([A-Z_][A-Za-z0-9_.]*))");
    /** Something done to a node, recorded on the operation and on the Node ({@code OperationRecorder.nodeEvent}, {@code nodeWarning}). */
    private static final Pattern NODE_EVENT_CALL = Pattern.compile("\\bnode(?:Event|Warning)\\(\\s*\\w+\\s*,\\s*[^,]+,\\s*(\"(\\w+)\"|([A-Z_][A-Za-z0-9_.]*))");
    private static final Pattern CONDITION_CALL = Pattern.compile("Conditions\\.set(?:Unknown)?\\([^,]+,\\s*(\"(\\w+)\"|([A-Z_][A-Za-z0-9_.]*))");
    private static final Pattern STRING_CONSTANT = Pattern.compile("static final String ([A-Z_][A-Z0-9_]*)\\s*=\\s*\"(\\w+)\"");
    private static final Pattern DESCRIBED_EVENT = Pattern.compile("^\\s+(Normal|Warning)\\s+([A-Z]\\w+)\\s");
    private static final Pattern DESCRIBED_CONDITION = Pattern.compile("^\\s+([A-Z]\\w+)\\s+(True|False|Unknown)\\s+([A-Z]\\w+)");
    private static final Pattern PROSE_EVENT = Pattern.compile("event \\(reason `(\\w+)`\\)|`(\\w+)` event|event `(\\w+)`");
    private static final Path EVENTS_TABLE = Path.of("docs/troubleshooting.md");
    private static final Pattern PROSE_CONDITION = Pattern.compile("condition `(\\w+)`|`(\\w+)` condition");

    @Test
    void everyEventReasonInTheDocsIsOneTheCodeRecords() throws IOException {
        Set<String> reasons = eventReasons();
        assertThat(reasons).as("event reasons found in the sources").contains("Cordoned", "VmMapDrift");
        Map<String, String> unknown = new TreeMap<>();
        for (Path doc : docs()) {
            for (String line : inConsoleBlocks(doc)) {
                Matcher event = DESCRIBED_EVENT.matcher(line);
                if (event.find() && !reasons.contains(event.group(2))) {
                    unknown.put(event.group(2), doc + ": " + line.strip());
                }
            }
            for (String line : Files.readAllLines(doc)) {
                Matcher prose = PROSE_EVENT.matcher(line);
                while (prose.find()) {
                    String reason = Stream.of(prose.group(1), prose.group(2), prose.group(3)).filter(r -> r != null).findFirst().orElseThrow();
                    if (!reasons.contains(reason)) {
                        unknown.put(reason, doc + ": " + line.strip());
                    }
                }
            }
        }
        assertThat(unknown).as("event reasons the docs name but the code never records (the code's: %s)", reasons).isEmpty();
    }

    @Test
    void theEventsTableListsEveryReasonTheCodeRecordsAndNoOther() throws IOException {
        Set<String> recorded = eventReasons();
        recorded.addAll(finalPhases());
        Set<String> listed = new TreeSet<>();
        for (String line : eventsTable()) {
            Pattern.compile("`(\\w+)`").matcher(line.split("\\|")[1]).results().forEach(m -> listed.add(m.group(1)));
        }
        assertThat(listed).as("reasons in %s's Events table that the code never records", EVENTS_TABLE).isSubsetOf(recorded);
        assertThat(recorded).as("reasons the code records that %s's Events table lacks", EVENTS_TABLE).isSubsetOf(listed);
    }

    @Test
    void theEventsTableMarksExactlyTheReasonsAlsoRecordedOnNodes() throws IOException {
        Set<String> onNodes = arguments(NODE_EVENT_CALL);
        assertThat(onNodes).as("reasons recorded on Nodes, found in the sources").contains("Cordoned", "Uncordoned", "Upgrading");
        Set<String> marked = new TreeSet<>();
        for (String line : eventsTable()) {
            String[] cells = line.split("\\|");
            if (Arrays.stream(cells[3].split(",")).map(String::strip).anyMatch("Node"::equals)) {
                Pattern.compile("`(\\w+)`").matcher(cells[1]).results().forEach(m -> marked.add(m.group(1)));
            }
        }
        assertThat(marked).as("reasons %s's Events table marks as on the Node", EVENTS_TABLE).isEqualTo(onNodes);
    }

    @Test
    void everyConditionTypeInTheDocsIsOneTheCodeSets() throws IOException {
        Set<String> types = conditionTypes();
        Set<String> literals = literals();
        Map<String, String> unknown = new TreeMap<>();
        for (Path doc : docs()) {
            for (String line : inConsoleBlocks(doc)) {
                Matcher condition = DESCRIBED_CONDITION.matcher(line);
                if (condition.find() && (!types.contains(condition.group(1)) || !literals.contains(condition.group(3)))) {
                    unknown.put(condition.group(1) + "/" + condition.group(3), doc + ": " + line.strip());
                }
            }
            for (String line : Files.readAllLines(doc)) {
                Matcher prose = PROSE_CONDITION.matcher(line);
                while (prose.find()) {
                    String type = prose.group(1) != null ? prose.group(1) : prose.group(2);
                    if (!types.contains(type)) {
                        unknown.put(type, doc + ": " + line.strip());
                    }
                }
            }
        }
        assertThat(unknown).as("condition types (or type/reason) the docs name but the code does not have (types: %s)", types).isEmpty();
    }

    /** The public String constants of {@link Conditions}, and every type the sources pass to {@code Conditions.set}. */
    static Set<String> conditionTypes() throws IOException {
        Set<String> types = constants(Conditions.class);
        types.addAll(arguments(CONDITION_CALL));
        return types;
    }

    private static Set<String> constants(Class<?> holder) {
        return Arrays.stream(holder.getFields()).filter(f -> Modifier.isStatic(f.getModifiers()) && f.getType() == String.class)
                .map(VocabularyDocTest::value).collect(Collectors.toCollection(TreeSet::new));
    }

    /** Every capitalised word the sources pass as a string literal: condition reasons are among them. */
    private static Set<String> literals() throws IOException {
        return sources().stream().flatMap(s -> Pattern.compile("\"([A-Z][A-Za-z]+)\"").matcher(s).results().map(m -> m.group(1)))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The rows of docs/troubleshooting.md's Events table. */
    private static List<String> eventsTable() throws IOException {
        List<String> lines = Files.readAllLines(EVENTS_TABLE);
        List<String> rows = new ArrayList<>();
        for (String line : lines.subList(lines.indexOf("## Events"), lines.size())) {
            if (line.startsWith("## ") && !line.equals("## Events")) {
                break;
            }
            if (line.startsWith("| `")) {
                rows.add(line);
            }
        }
        return rows;
    }

    /** The phases an operation's end is announced under ({@code OperationRecorder.finished}: the kind's phase for the final stage). */
    private static Set<String> finalPhases() {
        Set<String> phases = new TreeSet<>();
        for (NodeOperationStatus status : List.of(new NodeUpgradeStatus(), new ScaleDownStatus())) {
            for (Stage stage : List.of(Stage.SUCCEEDED, Stage.ROLLED_BACK, Stage.FAILED)) {
                status.enter(stage);
                phases.add(status.phaseName());
            }
        }
        return phases;
    }

    /** The reasons events are recorded under, waits' included; CloudStack waits take theirs from {@link CloudStackWait}. */
    static Set<String> eventReasons() throws IOException {
        Set<String> reasons = arguments(EVENT_CALL);
        reasons.addAll(arguments(NODE_EVENT_CALL));
        reasons.addAll(constants(CloudStackWait.class));
        return reasons;
    }

    /** The word a call passes (group 2 a literal, group 3 a constant whose value the sources define). */
    private static Set<String> arguments(Pattern call) throws IOException {
        List<String> sources = sources();
        Map<String, String> constants = new TreeMap<>();
        sources.forEach(s -> STRING_CONSTANT.matcher(s).results().forEach(m -> constants.put(m.group(1), m.group(2))));
        Set<String> reasons = new TreeSet<>();
        for (String source : sources) {
            call.matcher(source).results().forEach(m -> {
                if (m.group(2) != null) {
                    reasons.add(m.group(2));
                } else {
                    String constant = m.group(3).substring(m.group(3).lastIndexOf('.') + 1);
                    if (constants.containsKey(constant)) {
                        reasons.add(constants.get(constant));
                    }
                }
            });
        }
        return reasons;
    }

    private static List<String> sources() throws IOException {
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            return files.filter(f -> f.toString().endsWith(".java")).map(VocabularyDocTest::read).toList();
        }
    }

    private static List<Path> docs() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("docs"))) {
            return Stream.concat(files.filter(f -> f.toString().endsWith(".md")), Stream.of(Path.of("README.md"))).sorted().toList();
        }
    }

    /** The lines inside ```console blocks, where the docs show what kubectl prints. */
    private static List<String> inConsoleBlocks(Path doc) throws IOException {
        List<String> lines = new ArrayList<>();
        boolean inside = false;
        for (String line : Files.readAllLines(doc)) {
            if (line.startsWith("```")) {
                inside = !inside && line.startsWith("```console");
            } else if (inside) {
                lines.add(line);
            }
        }
        return lines;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String value(Field field) {
        try {
            return (String) field.get(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
