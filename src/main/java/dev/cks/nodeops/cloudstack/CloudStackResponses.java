package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads CloudStack's JSON answers: every answer is one object keyed {@code <command>response}
 * (or {@code errorresponse}); lists carry {@code count} (all matches, not the page) and one array
 * named after the entity, and an empty list is just {@code {}}.
 */
public final class CloudStackResponses {

    /** Unknown fields are expected: every CloudStack release adds some. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    public record ApiError(Integer errorCode, Integer csErrorCode, String errorText) {
    }

    public record ListPage<T>(long count, List<T> items) {
    }

    private CloudStackResponses() {
    }

    /** The object inside the single top-level key, whatever that key is called. */
    public static JsonNode envelope(JsonNode root) {
        if (root == null || !root.isObject() || root.isEmpty()) {
            throw new IllegalArgumentException("not a CloudStack answer: expected {\"<command>response\": {...}}");
        }
        JsonNode fallback = null;
        for (Iterator<Map.Entry<String, JsonNode>> fields = root.fields(); fields.hasNext();) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (field.getKey().endsWith("response") && field.getValue().isObject()) {
                return field.getValue();
            }
            if (fallback == null && field.getValue().isObject()) {
                fallback = field.getValue();
            }
        }
        if (fallback == null) {
            throw new IllegalArgumentException("not a CloudStack answer: no response object");
        }
        return fallback;
    }

    public static Optional<ApiError> error(JsonNode envelope) {
        if (!envelope.has("errorcode") && !envelope.has("errortext")) {
            return Optional.empty();
        }
        return Optional.of(new ApiError(intOrNull(envelope.get("errorcode")), intOrNull(envelope.get("cserrorcode")),
                textOrNull(envelope.get("errortext"))));
    }

    /** One page of a list answer; a missing array or count means nothing matched. */
    public static <T> ListPage<T> listPage(JsonNode envelope, String entityKey, Class<T> type) {
        JsonNode array = envelope.get(entityKey);
        List<T> items = new ArrayList<>();
        if (array != null && array.isArray()) {
            for (JsonNode item : array) {
                items.add(treeToValue(item, type));
            }
        }
        JsonNode count = envelope.get("count");
        return new ListPage<>(count == null || !count.canConvertToLong() ? items.size() : count.asLong(), items);
    }

    public static AsyncJobResult asyncJobResult(JsonNode envelope) {
        return treeToValue(envelope, AsyncJobResult.class);
    }

    /** The job id of an async command's immediate answer. */
    public static String jobId(JsonNode envelope, String command) {
        JsonNode jobId = envelope.get("jobid");
        if (jobId == null || jobId.asText().isBlank()) {
            throw new IllegalArgumentException(command + " answered without a jobid");
        }
        return jobId.asText();
    }

    /** The entity inside a finished job's {@code jobresult}, e.g. {@code kubernetescluster}. */
    public static <T> Optional<T> jobEntity(AsyncJobResult job, String entityKey, Class<T> type) {
        return job.jobResult() == null ? Optional.empty() : entity(job.jobResult(), entityKey, type);
    }

    /** The one object an answer carries under {@code entityKey}, e.g. listCapabilities' {@code capability}. */
    public static <T> Optional<T> entity(JsonNode envelope, String entityKey, Class<T> type) {
        JsonNode entity = envelope.get(entityKey);
        if (entity == null || !entity.isObject()) {
            return Optional.empty();
        }
        return Optional.of(treeToValue(entity, type));
    }

    /** A failed job's error, from {@code jobresult} (modern "object" form) or the text form of old servers. */
    public static ApiError jobError(AsyncJobResult job) {
        JsonNode result = job.jobResult();
        if (result != null && result.isObject()) {
            return new ApiError(firstInt(intOrNull(result.get("errorcode")), job.jobResultCode()),
                    intOrNull(result.get("cserrorcode")), textOrNull(result.get("errortext")));
        }
        return new ApiError(job.jobResultCode(), null, result == null ? null : result.asText());
    }

    /** Reads a tree straight into the model; cheaper than convertValue, which re-serializes first. */
    private static <T> T treeToValue(JsonNode node, Class<T> type) {
        try {
            return MAPPER.treeToValue(node, type);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("unexpected shape of a CloudStack " + type.getSimpleName() + ": "
                    + e.getOriginalMessage(), e);
        }
    }

    private static Integer firstInt(Integer preferred, Integer fallback) {
        return preferred != null ? preferred : fallback;
    }

    private static Integer intOrNull(JsonNode node) {
        return node == null || node.isNull() || !node.canConvertToInt() && !node.isTextual() ? null : parseInt(node);
    }

    private static Integer parseInt(JsonNode node) {
        if (node.isNumber()) {
            return node.asInt();
        }
        try {
            return Integer.valueOf(node.asText().trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String textOrNull(JsonNode node) {
        return node == null || node.isNull() ? null : node.asText();
    }
}
