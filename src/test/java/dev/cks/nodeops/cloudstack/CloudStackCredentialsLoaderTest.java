package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.junit5.StartStop;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CloudStackCredentialsLoaderTest {

    private static final String CLOUD_CONFIG = """
            [Global]
            api-url = https://cloud.example/client/api
            api-key = key-from-ini
            secret-key = secret-from-ini
            project-id = 0b3c6551-e459-44a2-9022-ff0b2e4d4259
            zone = zone-1
            ssl-no-verify = false
            """;

    @StartStop
    private final MockWebServer kubernetesApi = new MockWebServer();

    private static Secret secret(String namespace, String name, Map<String, String> plain) {
        Map<String, String> data = new java.util.HashMap<>();
        plain.forEach((key, value) -> data.put(key, Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8))));
        return new SecretBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata().withData(data).build();
    }

    @Test
    void readsTheCksSecretThroughTheKubernetesApi() throws Exception {
        Secret cks = secret("kube-system", "cloudstack-secret", Map.of("cloud-config", CLOUD_CONFIG));
        kubernetesApi.enqueue(new MockResponse.Builder().code(200).addHeader("Content-Type", "application/json")
                .body(Serialization.asJson(cks)).build());
        Config config = new ConfigBuilder().withMasterUrl(kubernetesApi.url("/").toString()).withRequestRetryBackoffLimit(0).build();

        CloudStackCredentials credentials;
        try (KubernetesClient kubernetes = new KubernetesClientBuilder().withConfig(config).build()) {
            credentials = CloudStackCredentialsLoader.fromSecret(kubernetes,
                    CloudStackCredentialsLoader.CKS_SECRET_NAMESPACE, CloudStackCredentialsLoader.CKS_SECRET_NAME);
        }

        RecordedRequest request = kubernetesApi.takeRequest();
        assertThat(request.getUrl().encodedPath()).isEqualTo("/api/v1/namespaces/kube-system/secrets/cloudstack-secret");
        assertThat(credentials.apiUrl()).isEqualTo("https://cloud.example/client/api");
        assertThat(credentials.apiKey()).isEqualTo("key-from-ini");
        assertThat(credentials.secretKey()).isEqualTo("secret-from-ini");
        assertThat(credentials.projectId()).isEqualTo("0b3c6551-e459-44a2-9022-ff0b2e4d4259");
        assertThat(credentials.zone()).isEqualTo("zone-1");
        assertThat(credentials.insecureSkipTlsVerify()).isFalse();
    }

    @Test
    void saysWhichSecretIsMissing() throws Exception {
        kubernetesApi.enqueue(new MockResponse.Builder().code(404).addHeader("Content-Type", "application/json")
                .body("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}").build());
        Config config = new ConfigBuilder().withMasterUrl(kubernetesApi.url("/").toString()).withRequestRetryBackoffLimit(0).build();

        try (KubernetesClient kubernetes = new KubernetesClientBuilder().withConfig(config).build()) {
            assertThatThrownBy(() -> CloudStackCredentialsLoader.fromSecret(kubernetes, "ops", "cs-keys"))
                    .hasMessageContaining("Secret ops/cs-keys").hasMessageContaining("does not exist");
        }
    }

    @Test
    void acceptsPlainKeysAndACaBundle() {
        Secret plain = secret("ops", "cs", Map.of("api-url", "https://c/client/api", "api-key", "k", "secret-key", "s",
                "ssl-no-verify", "true", "ca-bundle", "-----BEGIN CERTIFICATE-----"));

        CloudStackCredentials credentials = CloudStackCredentialsLoader.fromSecret(plain);

        assertThat(credentials.apiKey()).isEqualTo("k");
        assertThat(credentials.insecureSkipTlsVerify()).isTrue();
        assertThat(credentials.caBundlePem()).startsWith("-----BEGIN CERTIFICATE-----");
        assertThat(credentials.projectId()).isNull();
    }

    @Test
    void namesTheSecretAndTheMissingKey() {
        Secret incomplete = secret("ops", "cs", Map.of("api-url", "https://c/client/api", "api-key", "k"));

        assertThatThrownBy(() -> CloudStackCredentialsLoader.fromSecret(incomplete))
                .hasMessageContaining("Secret ops/cs").hasMessageContaining("'secret-key'");
    }

    @Test
    void readsEnvironmentVariablesAndAConfigFile(@TempDir Path dir) throws Exception {
        Path ini = dir.resolve("cloud-config");
        Files.writeString(ini, CLOUD_CONFIG);

        CloudStackCredentials fromFile = CloudStackCredentialsLoader.fromEnvironment(Map.of("CLOUDSTACK_CLOUD_CONFIG", ini.toString()));
        CloudStackCredentials fromVariables = CloudStackCredentialsLoader.fromEnvironment(Map.of(
                "CLOUDSTACK_API_URL", "http://127.0.0.1:8080/client/api", "CLOUDSTACK_API_KEY", "k", "CLOUDSTACK_SECRET_KEY", "s"));

        assertThat(fromFile.apiKey()).isEqualTo("key-from-ini");
        assertThat(fromVariables.apiUrl()).isEqualTo("http://127.0.0.1:8080/client/api");
        assertThat(fromVariables.secretKey()).isEqualTo("s");
    }

    @Test
    void neverPrintsTheKeys() {
        CloudStackCredentials credentials = CloudStackCredentials.of("https://c/client/api", "visible-api-key", "visible-secret");
        assertThat(credentials.toString()).doesNotContain("visible-api-key", "visible-secret").contains("apiKey=***");
    }
}
