package dev.cks.nodeops.testing;

import java.util.Iterator;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * An object as {@code kubectl get -o json} prints it: Go's {@code json.MarshalIndent} with four spaces, so that a
 * size measured without a cluster is the size the same object has on the terminal (and within a few bytes of what
 * {@code wc -c} counts there).
 */
public final class KubectlJson {
    private KubectlJson() {
    }

    /** Bytes of the object printed as kubectl prints it, with its trailing newline. */
    public static int size(Object object) {
        return print(object).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    public static String print(Object object) {
        StringBuilder out = new StringBuilder();
        write(Serialization.unmarshal(Serialization.asJson(object), JsonNode.class), "", out);
        return out.append('\n').toString();
    }

    private static void write(JsonNode node, String indent, StringBuilder out) {
        String inner = indent + "    ";
        if (node.isObject() && node.size() > 0) {
            out.append("{\n");
            for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext(); ) {
                Map.Entry<String, JsonNode> field = fields.next();
                out.append(inner).append(Serialization.asJson(field.getKey())).append(": ");
                write(field.getValue(), inner, out);
                out.append(fields.hasNext() ? ",\n" : "\n");
            }
            out.append(indent).append('}');
        } else if (node.isArray() && node.size() > 0) {
            out.append("[\n");
            for (int i = 0; i < node.size(); i++) {
                out.append(inner);
                write(node.get(i), inner, out);
                out.append(i < node.size() - 1 ? ",\n" : "\n");
            }
            out.append(indent).append(']');
        } else {
            out.append(node.isObject() ? "{}" : node.isArray() ? "[]" : node.toString());
        }
    }
}
