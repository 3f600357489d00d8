package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.junit5.StartStop;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** TLS against a server whose certificate only the test CA vouches for. */
class CloudStackTlsTest {

    private static final String VERSIONS = "{\"listkubernetessupportedversionsresponse\":{\"count\":1,"
            + "\"kubernetessupportedversion\":[{\"id\":\"v1\",\"semanticversion\":\"1.33.1\",\"isoid\":\"iso\"}]}}";

    @StartStop
    private final MockWebServer server = new MockWebServer();

    private final ManualTime time = new ManualTime();
    private String caPem;

    @BeforeEach
    void serveHttps() throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = getClass().getResourceAsStream("/tls/server.p12")) {
            keys.load(in, "test-only".toCharArray());
        }
        KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keyManagers.init(keys, "test-only".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keyManagers.getKeyManagers(), null, null);
        server.useHttps(context.getSocketFactory());
        try (InputStream in = getClass().getResourceAsStream("/tls/ca.pem")) {
            caPem = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    private CloudStackClient clientFor(CloudStackCredentials credentials) {
        return new CloudStackClient(credentials, CloudStackClientSettings.DEFAULTS, new SimpleMeterRegistry(), time, time);
    }

    private CloudStackCredentials credentials() {
        return CloudStackCredentials.of(server.url("/client/api").toString().replace("localhost", "127.0.0.1"), "key-1234", "secret-5678");
    }

    @Test
    void trustsTheServerThroughTheCaBundle() {
        server.enqueue(new MockResponse.Builder().body(VERSIONS).build());

        assertThat(clientFor(credentials().withCaBundle(caPem)).listKubernetesSupportedVersions())
                .extracting(KubernetesSupportedVersion::semanticVersion).containsExactly("1.33.1");
    }

    @Test
    void refusesAnUnknownCertificateByDefaultWithoutSendingTheRequest() {
        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> clientFor(credentials()).destroyVirtualMachine("vm-1"));

        assertThat(failure.kind()).isEqualTo(Kind.TRANSPORT_ERROR);
        assertThat(failure.requestNeverSent()).isTrue();
        assertThat(server.getRequestCount()).isZero();
    }

    @Test
    void acceptsAnyCertificateOnlyWhenToldTo() {
        server.enqueue(new MockResponse.Builder().body(VERSIONS).build());

        assertThat(clientFor(credentials().withInsecureSkipTlsVerify(true)).listKubernetesSupportedVersions()).hasSize(1);
    }

    @Test
    void rejectsACaBundleWithoutCertificates() {
        assertThat(catchThrowableOfType(IllegalArgumentException.class,
                () -> CloudStackHttpClients.trustManagerFor("not a certificate"))).hasMessageContaining("CA bundle");
    }
}
