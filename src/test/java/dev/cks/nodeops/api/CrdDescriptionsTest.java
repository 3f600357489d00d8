package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * Every field of every CRD under deploy/crds has a description, so that `kubectl explain` says what it
 * is (#35): the kind itself, spec, status and every field under them, through lists and maps. A field
 * added without one fails here, named by its path: give its Java field a {@code @JsonPropertyDescription}
 * (the descriptions of a kind, its spec and its status, and those of Kubernetes' types, are {@code CrdPostProcessor}'s), then
 * regenerate the CRDs (see {@link CrdDriftIT}).
 */
class CrdDescriptionsTest {
    private static final Path CRDS = Path.of("deploy/crds");

    /** Fields of the root that need no description of ours, with the reason. */
    private static final Map<String, String> EXEMPT_ROOT_FIELDS = Map.of(
            "apiVersion", "every object's, documented by Kubernetes itself (kubectl explain prints its text)",
            "kind", "every object's, documented by Kubernetes itself",
            "metadata", "every object's ObjectMeta, documented by Kubernetes itself");

    /**
     * Where a schema sits. An ELEMENT (the items of a list, the additionalProperties of a map) needs no description of
     * its own: `kubectl explain` prints the list's or map's description for it. Its fields, if it has any, are checked.
     */
    private enum Place { ROOT, FIELD, ELEMENT }

    @Test
    void everyFieldOfEveryCrdHasADescription() throws IOException {
        List<Path> files = crdFiles();
        assertThat(files).as("CRDs in %s", CRDS).isNotEmpty();
        List<String> undescribed = new ArrayList<>();
        for (Path file : files) {
            JsonNode crd = new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
            String kind = crd.at("/spec/names/kind").asText();
            for (JsonNode version : crd.at("/spec/versions")) {
                JsonNode root = version.at("/schema/openAPIV3Schema");
                assertThat(root.isMissingNode()).as("%s %s has an openAPIV3Schema", file, version.path("name").asText()).isFalse();
                walk(root, kind, " (" + file.getFileName() + ", " + version.path("name").asText() + ")", Place.ROOT, undescribed);
            }
        }
        assertThat(undescribed).as("fields without a description in %s (kubectl explain prints nothing for them): give each Java field a"
                + " @JsonPropertyDescription (a kind, its spec and status: CrdPostProcessor.KINDS), then regenerate the CRDs as CrdDriftIT says", CRDS)
                .isEmpty();
    }

    /** The walk itself: it finds a field without a description at any depth, and lets an element or an exempt root field be. */
    @Test
    void theWalkFindsAnUndescribedFieldAtAnyDepthAndNothingElse() throws IOException {
        JsonNode schema = new ObjectMapper(new YAMLFactory()).readTree("""
                description: a kind
                properties:
                  metadata: {type: object}
                  status:
                    description: its status
                    properties:
                      nodes:
                        description: its nodes
                        items:
                          properties:
                            name: {description: a name, type: string}
                            phase: {type: string}
                      counts:
                        description: counts by type
                        additionalProperties:
                          properties:
                            value: {type: integer}
                      tags: {description: tags, items: {type: string}}
                """);
        List<String> undescribed = new ArrayList<>();
        walk(schema, "Kind", "", Place.ROOT, undescribed);
        assertThat(undescribed).containsExactly("Kind.status.nodes[].phase", "Kind.status.counts{}.value");
    }

    /** Adds to {@code undescribed} the path (followed by {@code where}) of each schema from this one down that needs a description and has none. */
    private static void walk(JsonNode schema, String path, String where, Place place, List<String> undescribed) {
        if (place != Place.ELEMENT && schema.path("description").asText().isBlank()) {
            undescribed.add(path + where);
        }
        schema.path("properties").fields().forEachRemaining(field -> {
            if (!(place == Place.ROOT && EXEMPT_ROOT_FIELDS.containsKey(field.getKey()))) {
                walk(field.getValue(), path + "." + field.getKey(), where, Place.FIELD, undescribed);
            }
        });
        if (schema.path("items").isObject()) {
            walk(schema.path("items"), path + "[]", where, Place.ELEMENT, undescribed);
        }
        if (schema.path("additionalProperties").isObject()) {
            walk(schema.path("additionalProperties"), path + "{}", where, Place.ELEMENT, undescribed);
        }
    }

    private static List<Path> crdFiles() throws IOException {
        try (Stream<Path> files = Files.list(CRDS)) {
            return files.filter(f -> f.toString().endsWith(".yml") || f.toString().endsWith(".yaml")).sorted().toList();
        }
    }
}
