package dev.cks.nodeops.cloudstack;

/**
 * Where and as whom to call CloudStack, as found in CKS's {@code cloudstack-secret}.
 *
 * @param projectId set when the CKS cluster lives in a project; list calls are then scoped to it
 * @param insecureSkipTlsVerify {@code ssl-no-verify}: accept any server certificate
 * @param caBundlePem PEM certificates to trust instead of the JVM's default CAs (which apply
 *        when this is empty), for management servers with a private CA
 */
public record CloudStackCredentials(
        String apiUrl,
        String apiKey,
        String secretKey,
        String projectId,
        String zone,
        boolean insecureSkipTlsVerify,
        String caBundlePem) {

    public CloudStackCredentials {
        require(apiUrl, "api-url");
        require(apiKey, "api-key");
        require(secretKey, "secret-key");
        projectId = blankToNull(projectId);
        zone = blankToNull(zone);
        caBundlePem = blankToNull(caBundlePem);
    }

    public static CloudStackCredentials of(String apiUrl, String apiKey, String secretKey) {
        return new CloudStackCredentials(apiUrl, apiKey, secretKey, null, null, false, null);
    }

    public CloudStackCredentials withCaBundle(String pem) {
        return new CloudStackCredentials(apiUrl, apiKey, secretKey, projectId, zone, insecureSkipTlsVerify, pem);
    }

    public CloudStackCredentials withInsecureSkipTlsVerify(boolean insecure) {
        return new CloudStackCredentials(apiUrl, apiKey, secretKey, projectId, zone, insecure, caBundlePem);
    }

    public CloudStackCredentials withProjectId(String project) {
        return new CloudStackCredentials(apiUrl, apiKey, secretKey, project, zone, insecureSkipTlsVerify, caBundlePem);
    }

    private static void require(String value, String key) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("CloudStack credentials lack '" + key
                    + "'; set it in the [Global] section of cloud-config or as a Secret key of that name");
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** Never prints the keys: records are logged more often than anyone expects. */
    @Override
    public String toString() {
        return "CloudStackCredentials[apiUrl=" + apiUrl + ", apiKey=" + SecretRedactor.MASK + ", secretKey="
                + SecretRedactor.MASK + ", projectId=" + projectId + ", zone=" + zone + ", insecureSkipTlsVerify="
                + insecureSkipTlsVerify + ", caBundle=" + (caBundlePem == null ? "none" : "set") + "]";
    }
}
