package dev.cks.nodeops.cloudstack;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Masks credentials in any text that may reach a log line, an exception message or a metric:
 * parameter-shaped secrets ({@code apikey=…}, {@code signature=…}) by name, and the known key
 * values wherever they appear (plain or URL-encoded), because a server error text may echo them.
 */
public final class SecretRedactor {

    public static final String MASK = "***";

    private static final Pattern SECRET_PARAMS = Pattern.compile(
            "(?i)(\"?(?:apikey|api-key|api_key|secretkey|secret-key|secret_key|signature|sessionkey)\"?\\s*[=:]\\s*\"?)([^&\\s\"',}]+)");

    private final List<String> knownSecrets;

    public SecretRedactor(String... secrets) {
        List<String> values = new ArrayList<>();
        for (String secret : secrets) {
            // Short values would mask unrelated text and are not real keys anyway.
            if (secret != null && secret.length() >= 4) {
                values.add(secret);
                String encoded = RequestSigner.encodeValue(secret);
                if (!encoded.equals(secret)) {
                    values.add(encoded);
                }
            }
        }
        this.knownSecrets = List.copyOf(values);
    }

    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String result = SECRET_PARAMS.matcher(text).replaceAll("$1" + MASK);
        for (String secret : knownSecrets) {
            result = result.replace(secret, MASK);
        }
        return result;
    }
}
