package dev.cks.nodeops.scaledown;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;

/**
 * Reads status.targetNodes as the list it is, and as the comma-separated text an operator before 0.3.0 stored there: an
 * operator upgraded in place resumes, rolls back or releases a ScaleDown of the older one from its stored status, and
 * must find each node there by its own name (one list entry "w1,w2" would release no node and leave both cordoned).
 * Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY would make that one entry, hence this reader. What it read from text is a
 * {@link ReadFromText}: such a status must be replaced before it can be applied ({@link dev.cks.nodeops.operation.StatusStore#replace}).
 */
final class TargetNodesDeserializer extends StdDeserializer<List<String>> {
    /** Names read from the text an older operator stored. */
    static final class ReadFromText extends ArrayList<String> {
        ReadFromText(List<String> names) {
            super(names);
        }
    }

    TargetNodesDeserializer() {
        super(List.class);
    }

    @Override
    public List<String> deserialize(JsonParser parser, DeserializationContext context) throws IOException {
        if (parser.currentToken() == JsonToken.VALUE_STRING) {
            return new ReadFromText(Arrays.stream(parser.getText().split(",")).map(String::strip).filter(name -> !name.isEmpty()).toList());
        }
        List<String> names = new ArrayList<>();
        for (String name : context.readValue(parser, String[].class)) {
            names.add(name);
        }
        return names;
    }

    @Override
    public List<String> getNullValue(DeserializationContext context) {
        return new ArrayList<>();
    }
}
