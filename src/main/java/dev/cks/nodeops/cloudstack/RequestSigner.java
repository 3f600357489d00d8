package dev.cks.nodeops.cloudstack;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs CloudStack API requests the way the management server verifies them
 * (apache/cloudstack ApiServer.verifyRequest): parameters sorted by their raw, case-sensitive
 * names, values form-encoded with spaces as {@code %20}, the whole string lower-cased, then
 * HMAC-SHA1 with the secret key and standard Base64.
 */
public final class RequestSigner {

    public static final String SIGNATURE_PARAM = "signature";

    private RequestSigner() {
    }

    /** The exact text the server hashes; the {@code signature} parameter itself is left out. */
    public static String stringToSign(Map<String, String> params) {
        List<String> names = new ArrayList<>(params.keySet());
        names.remove(SIGNATURE_PARAM);
        // Sorting on raw names (not lower-cased ones) matters: "temPlateidd" sorts before
        // "templateId", and the server does the same before it lower-cases.
        names.sort(null);
        StringBuilder text = new StringBuilder();
        for (String name : names) {
            if (text.length() > 0) {
                text.append('&');
            }
            text.append(name).append('=').append(encodeValue(params.get(name)));
        }
        return text.toString().toLowerCase(Locale.ROOT);
    }

    /** Base64 HMAC-SHA1 of the lower-cased string to sign; not URL-encoded. */
    public static String sign(Map<String, String> params, String secretKey) {
        return hmacSha1Base64(stringToSign(params), secretKey);
    }

    /** Signs a ready-made query string (lower-casing it first, as the server compares). */
    public static String signQueryString(String queryString, String secretKey) {
        return hmacSha1Base64(queryString.toLowerCase(Locale.ROOT), secretKey);
    }

    /** Java form encoding with {@code +} turned into {@code %20}, as the server re-encodes values. */
    public static String encodeValue(String value) {
        return URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String hmacSha1Base64(String text, String secretKey) {
        try {
            Mac mac = Mac.getInstance("HmacSHA1");
            mac.init(new SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
            return Base64.getEncoder().encodeToString(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            // HmacSHA1 is mandatory in every JRE, so this means a broken runtime, not bad input.
            throw new IllegalStateException("HmacSHA1 is not available in this JVM", e);
        }
    }
}
