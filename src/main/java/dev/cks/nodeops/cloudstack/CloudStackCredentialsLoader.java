package dev.cks.nodeops.cloudstack;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Finds CloudStack credentials in the places CKS and local runs keep them: CKS's Secret
 * ({@code kube-system/cloudstack-secret}, key {@code cloud-config}, an INI file), any Secret with
 * the same INI or with plain keys ({@code api-url}, {@code api-key}, …), or environment variables.
 */
public final class CloudStackCredentialsLoader {

    public static final String CKS_SECRET_NAMESPACE = "kube-system";
    public static final String CKS_SECRET_NAME = "cloudstack-secret";
    public static final String CLOUD_CONFIG_KEY = "cloud-config";
    public static final String CA_BUNDLE_KEY = "ca-bundle";

    private CloudStackCredentialsLoader() {
    }

    public static CloudStackCredentials fromSecret(KubernetesClient kubernetes, String namespace, String name) {
        Secret secret = kubernetes.secrets().inNamespace(namespace).withName(name).get();
        if (secret == null) {
            throw new IllegalArgumentException("Secret " + namespace + "/" + name
                    + " with CloudStack credentials does not exist; create it or point the operator at another Secret");
        }
        return fromSecret(secret);
    }

    public static CloudStackCredentials fromSecret(Secret secret) {
        Map<String, String> decoded = new HashMap<>();
        if (secret.getData() != null) {
            secret.getData().forEach((key, value) ->
                    decoded.put(key, new String(Base64.getMimeDecoder().decode(value), StandardCharsets.UTF_8)));
        }
        if (secret.getStringData() != null) {
            decoded.putAll(secret.getStringData());
        }
        String where = "Secret " + secret.getMetadata().getNamespace() + "/" + secret.getMetadata().getName();
        return fromKeyValues(decoded, where);
    }

    /**
     * Credentials from decoded Secret data: the {@code cloud-config} INI when present, with plain
     * keys filling anything it leaves out.
     */
    public static CloudStackCredentials fromKeyValues(Map<String, String> data, String where) {
        Map<String, String> values = new HashMap<>();
        data.forEach((key, value) -> values.put(key.toLowerCase(Locale.ROOT), value));
        String ini = values.get(CLOUD_CONFIG_KEY);
        if (ini != null) {
            // A value from the INI wins over a plain key of the same name: it is what the CCM uses.
            values.putAll(CloudConfigIni.section(ini, "Global"));
        }
        try {
            return new CloudStackCredentials(
                    trimmed(values.get("api-url")),
                    trimmed(values.get("api-key")),
                    trimmed(values.get("secret-key")),
                    values.get("project-id"),
                    values.get("zone"),
                    Boolean.parseBoolean(trimmed(values.get("ssl-no-verify"))),
                    values.get(CA_BUNDLE_KEY));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    /**
     * For local runs: {@code CLOUDSTACK_CLOUD_CONFIG} (path of a cloud-config INI) or
     * {@code CLOUDSTACK_API_URL}, {@code CLOUDSTACK_API_KEY}, {@code CLOUDSTACK_SECRET_KEY},
     * {@code CLOUDSTACK_PROJECT_ID}, {@code CLOUDSTACK_ZONE}, {@code CLOUDSTACK_SSL_NO_VERIFY},
     * {@code CLOUDSTACK_CA_BUNDLE} (path of a PEM file).
     */
    public static CloudStackCredentials fromEnvironment(Map<String, String> env) {
        Map<String, String> values = new HashMap<>();
        try {
            String configPath = env.get("CLOUDSTACK_CLOUD_CONFIG");
            if (configPath != null && !configPath.isBlank()) {
                values.put(CLOUD_CONFIG_KEY, Files.readString(Path.of(configPath)));
            }
            String caPath = env.get("CLOUDSTACK_CA_BUNDLE");
            if (caPath != null && !caPath.isBlank()) {
                values.put(CA_BUNDLE_KEY, Files.readString(Path.of(caPath)));
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("Cannot read a CloudStack credentials file: " + e.getMessage(), e);
        }
        putIfSet(values, "api-url", env.get("CLOUDSTACK_API_URL"));
        putIfSet(values, "api-key", env.get("CLOUDSTACK_API_KEY"));
        putIfSet(values, "secret-key", env.get("CLOUDSTACK_SECRET_KEY"));
        putIfSet(values, "project-id", env.get("CLOUDSTACK_PROJECT_ID"));
        putIfSet(values, "zone", env.get("CLOUDSTACK_ZONE"));
        putIfSet(values, "ssl-no-verify", env.get("CLOUDSTACK_SSL_NO_VERIFY"));
        return fromKeyValues(values, "environment");
    }

    private static void putIfSet(Map<String, String> values, String key, String value) {
        if (value != null && !value.isBlank()) {
            values.put(key, value);
        }
    }

    private static String trimmed(String value) {
        return value == null ? null : value.trim();
    }
}
