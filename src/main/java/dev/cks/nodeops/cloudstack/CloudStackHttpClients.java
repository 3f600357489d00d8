package dev.cks.nodeops.cloudstack;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import org.jboss.logging.Logger;

/** Builds the OkHttp client: timeouts from the settings and TLS from the credentials. */
public final class CloudStackHttpClients {

    private static final Logger LOG = Logger.getLogger(CloudStackHttpClients.class);

    private CloudStackHttpClients() {
    }

    public static OkHttpClient create(CloudStackCredentials credentials, CloudStackClientSettings settings) {
        OkHttpClient.Builder builder = new OkHttpClient.Builder()
                .connectTimeout(settings.connectTimeout())
                .readTimeout(settings.readTimeout())
                .writeTimeout(settings.readTimeout())
                .callTimeout(settings.callTimeout())
                // OkHttp would otherwise silently resend a POST on some connection failures;
                // whether a write may be repeated is the CloudStack client's decision alone.
                .retryOnConnectionFailure(false)
                // A redirect would turn a signed POST into a GET without its body.
                .followRedirects(false)
                .followSslRedirects(false);
        if (credentials.insecureSkipTlsVerify()) {
            LOG.warnf("TLS certificate verification is OFF for the CloudStack API at %s (ssl-no-verify); "
                    + "anyone on the network path can read the API key's requests. Set a CA bundle instead.",
                    credentials.apiUrl());
            X509TrustManager trustAll = new TrustEverything();
            builder.sslSocketFactory(sslContext(trustAll).getSocketFactory(), trustAll)
                    .hostnameVerifier((host, session) -> true);
        } else if (credentials.caBundlePem() != null) {
            X509TrustManager trustBundle = trustManagerFor(credentials.caBundlePem());
            builder.sslSocketFactory(sslContext(trustBundle).getSocketFactory(), trustBundle);
        }
        return builder.build();
    }

    /**
     * The client used for writes: no pooled connections, so a write never goes out on a
     * connection the server already closed while idle, the usual cause of a failure that could
     * not be told apart from "the server got it".
     */
    public static OkHttpClient forWrites(OkHttpClient base) {
        return base.newBuilder().connectionPool(new ConnectionPool(0, 1, TimeUnit.SECONDS)).build();
    }

    /** Trusts exactly the certificates of a PEM bundle, as kubectl does with a CA file. */
    public static X509TrustManager trustManagerFor(String pemBundle) {
        try {
            Collection<? extends Certificate> certificates = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pemBundle.getBytes(StandardCharsets.US_ASCII)));
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException("the CloudStack CA bundle holds no PEM certificate");
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int index = 0;
            for (Certificate certificate : certificates) {
                store.setCertificateEntry("ca-" + index++, certificate);
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            for (TrustManager manager : factory.getTrustManagers()) {
                if (manager instanceof X509TrustManager x509) {
                    return x509;
                }
            }
            throw new IllegalStateException("no X509TrustManager in this JVM");
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalArgumentException("the CloudStack CA bundle is not valid PEM: " + e.getMessage(), e);
        }
    }

    private static SSLContext sslContext(X509TrustManager trustManager) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] { trustManager }, new SecureRandom());
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    private static final class TrustEverything implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
