package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The chart's README lists every value with its default and description, generated from values.yaml
 * (a `# --` comment above a key describes it, as helm-docs reads them). The test fails when the README
 * is out of date or a value has no description; `-Dchart.readme.write=true` rewrites the README.
 */
class ChartReadmeTest {
    static final Path CHART = Path.of("deploy/helm/cks-node-operator");
    private static final String BEGIN = "<!-- values: generated from values.yaml by ChartReadmeTest; do not edit -->";
    private static final String END = "<!-- end of values -->";
    private static final Pattern KEY = Pattern.compile("^(\\s*)([A-Za-z0-9_]+):(.*)$");

    @Test
    void theReadmeListsEveryValueWithItsDefaultAndDescription() throws IOException {
        String values = Files.readString(CHART.resolve("values.yaml"));
        Map<String, String> descriptions = descriptions(values);
        Map<String, Object> defaults = new ObjectMapper(new YAMLFactory()).readValue(values, Map.class);
        Map<String, Object> leaves = new LinkedHashMap<>();
        flatten("", defaults, leaves);
        assertThat(leaves.keySet()).as("values without a `# --` description (on them or on a value that holds them)")
                .allMatch(path -> descriptions.keySet().stream().anyMatch(d -> path.equals(d) || path.startsWith(d + ".")));

        StringBuilder table = new StringBuilder(BEGIN).append("\n| value | default | description |\n|---|---|---|\n");
        ObjectMapper json = new ObjectMapper();
        for (Map.Entry<String, String> row : descriptions.entrySet()) {
            table.append("| `").append(row.getKey()).append("` | `").append(json.writeValueAsString(valueAt(defaults, row.getKey())).replace("|", "\\|"))
                    .append("` | ").append(row.getValue().replace("|", "\\|")).append(" |\n");
        }
        table.append(END);
        Path readme = CHART.resolve("README.md");
        String current = Files.readString(readme);
        String expected = current.substring(0, current.indexOf(BEGIN)) + table + current.substring(current.indexOf(END) + END.length());
        if (Boolean.getBoolean("chart.readme.write")) {
            Files.writeString(readme, expected);
        }
        assertThat(current).as("%s is out of date: run ./mvnw test -Dtest=ChartReadmeTest -Dchart.readme.write=true", readme).isEqualTo(expected);
    }

    /** Key path → the `# --` comment above it (continued by the `#` lines after it). */
    static Map<String, String> descriptions(String valuesYaml) {
        Map<String, String> descriptions = new LinkedHashMap<>();
        Deque<Map.Entry<Integer, String>> parents = new ArrayDeque<>();
        StringBuilder pending = null;
        for (String line : valuesYaml.lines().toList()) {
            String trimmed = line.strip();
            if (trimmed.startsWith("# --")) {
                pending = new StringBuilder(trimmed.substring(4).strip());
                continue;
            }
            if (trimmed.startsWith("#")) {
                if (pending != null) {
                    pending.append(' ').append(trimmed.substring(1).strip());
                }
                continue;
            }
            Matcher key = KEY.matcher(line);
            if (!key.matches()) {
                continue; // list items and blank lines
            }
            int indent = key.group(1).length();
            while (!parents.isEmpty() && parents.peek().getKey() >= indent) {
                parents.pop();
            }
            String path = (parents.isEmpty() ? "" : parents.peek().getValue() + ".") + key.group(2);
            if (pending != null) {
                descriptions.put(path, pending.toString());
                pending = null;
            }
            parents.push(Map.entry(indent, path));
        }
        return descriptions;
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String prefix, Map<String, Object> map, Map<String, Object> leaves) {
        map.forEach((key, value) -> {
            String path = prefix.isEmpty() ? key : prefix + "." + key;
            if (value instanceof Map<?, ?> nested && !nested.isEmpty()) {
                flatten(path, (Map<String, Object>) nested, leaves);
            } else {
                leaves.put(path, value);
            }
        });
    }

    private static Object valueAt(Map<String, Object> values, String path) {
        Object current = values;
        for (String key : path.split("\\.")) {
            current = ((Map<?, ?>) current).get(key);
        }
        return current;
    }
}
