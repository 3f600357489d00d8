package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * docs/configuration.md's "CR fields" is true to the CRDs users install (deploy/crds). Each `###`
 * section there documents the kinds its heading names; a heading naming `spec.X` documents fields under
 * X (its rows are relative to it). A row documents a field and everything under it (a row for
 * `executor.script.configMapRef` covers its name and key). The doc's "<Kind> may change:" lines must
 * name exactly the spec fields the CRD lets change (those without an `oldSelf` rule).
 */
class ConfigurationDocTest {
    private static final Path DOC = Path.of("docs/configuration.md");
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\|");
    private static final Pattern SECTION_FIELD = Pattern.compile("`spec\\.([^`]+)`");
    private static final Pattern FIXED_FIELD = Pattern.compile("has\\(self\\.(\\w+)\\) == has\\(oldSelf\\.\\w+\\)");
    private static final Pattern MAY_CHANGE = Pattern.compile("^- (\\w+) may change: (.*)$");

    @Test
    void everySpecFieldOfTheCrdsHasARowAndEveryRowIsAField() throws IOException {
        Map<String, Set<String>> documented = documentedFields();
        Map<String, String> missing = new TreeMap<>();
        Map<String, String> unknown = new TreeMap<>();
        for (JsonNode crd : crds()) {
            String kind = crd.at("/spec/names/kind").asText();
            Set<String> fields = new TreeSet<>();
            Set<String> leaves = new TreeSet<>();
            walk(spec(crd), "", fields, leaves);
            Set<String> rows = documented.getOrDefault(kind, Set.of());
            leaves.stream().filter(leaf -> rows.stream().noneMatch(row -> leaf.equals(row) || leaf.startsWith(row + ".") || leaf.startsWith(row + "[]")))
                    .forEach(leaf -> missing.put(kind + " spec." + leaf, "no row in " + DOC));
            rows.stream().filter(row -> !fields.contains(row)).forEach(row -> unknown.put(kind + " spec." + row, "not in the CRD"));
        }
        assertThat(documented.keySet()).as("kinds with rows in %s", DOC).contains("NodeUpgrade", "ScaleDown", "VMMapAudit", "DrainReport");
        assertThat(missing).as("CRD spec fields %s does not document", DOC).isEmpty();
        assertThat(unknown).as("rows of %s that name no CRD field", DOC).isEmpty();
    }

    @Test
    void theFieldsTheDocSaysMayChangeAreTheOnesTheCrdLetsChange() throws IOException {
        Map<String, String> said = new TreeMap<>();
        for (String line : Files.readAllLines(DOC)) {
            Matcher mayChange = MAY_CHANGE.matcher(line);
            if (mayChange.matches()) {
                said.put(mayChange.group(1), mayChange.group(2));
            }
        }
        for (JsonNode crd : crds()) {
            String kind = crd.at("/spec/names/kind").asText();
            JsonNode spec = spec(crd);
            Set<String> fixed = new TreeSet<>();
            spec.path("x-kubernetes-validations").forEach(rule -> FIXED_FIELD.matcher(rule.path("rule").asText()).results().forEach(m -> fixed.add(m.group(1))));
            Set<String> changeable = new TreeSet<>();
            spec.path("properties").fieldNames().forEachRemaining(field -> {
                if (!fixed.contains(field)) {
                    changeable.add(field);
                }
            });
            assertThat(said).as("%s says which fields of a %s may change (a line \"- %s may change: …\")", DOC, kind, kind).containsKey(kind);
            if (fixed.isEmpty()) {
                assertThat(said.get(kind)).as("every field of a %s may change", kind).startsWith("every field");
            } else {
                Set<String> named = Pattern.compile("`(\\w+)`").matcher(said.get(kind)).results().map(m -> m.group(1)).collect(Collectors.toCollection(TreeSet::new));
                assertThat(named).as("the fields of a %s that may change", kind).isEqualTo(changeable);
            }
        }
    }

    /** Kind → the spec fields the doc's rows name, as paths ("drain.escalation[].action"). */
    private static Map<String, Set<String>> documentedFields() throws IOException {
        List<String> lines = Files.readAllLines(DOC);
        Map<String, Set<String>> documented = new TreeMap<>();
        Set<String> kinds = Set.of();
        String prefix = "";
        for (String line : lines.subList(lines.indexOf("## CR fields"), lines.size())) {
            if (line.startsWith("### ")) {
                kinds = Stream.of("NodeUpgrade", "ScaleDown", "VMMapAudit", "DrainReport").filter(line::contains).collect(Collectors.toSet());
                Matcher field = SECTION_FIELD.matcher(line);
                prefix = field.find() ? field.group(1) + "." : "";
                continue;
            }
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                for (String kind : kinds) {
                    documented.computeIfAbsent(kind, k -> new TreeSet<>()).add(prefix + row.group(1));
                }
            }
        }
        return documented;
    }

    /** Every field path under a schema (arrays of objects as "name[].child"); leaves are the fields with no properties of their own. */
    private static void walk(JsonNode schema, String path, Set<String> fields, Set<String> leaves) {
        JsonNode properties = schema.has("items") ? schema.path("items").path("properties") : schema.path("properties");
        if (properties.isMissingNode() || properties.isEmpty()) {
            leaves.add(path);
            return;
        }
        String under = path.isEmpty() ? "" : path + (schema.has("items") ? "[]." : ".");
        properties.fields().forEachRemaining(field -> {
            fields.add(under + field.getKey());
            walk(field.getValue(), under + field.getKey(), fields, leaves);
        });
    }

    private static JsonNode spec(JsonNode crd) {
        return crd.at("/spec/versions/0/schema/openAPIV3Schema/properties/spec");
    }

    private static List<JsonNode> crds() throws IOException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        List<JsonNode> crds = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("deploy/crds"))) {
            for (Path file : files.sorted().toList()) {
                crds.add(yaml.readTree(file.toFile()));
            }
        }
        assertThat(crds).as("CRDs in deploy/crds").hasSize(4);
        return crds;
    }
}
