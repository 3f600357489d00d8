package dev.cks.nodeops.upgrade;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Which upgrade scripts may run as root on the nodes: those whose sha256 the operator's configuration
 * lists (Helm value upgrade.scripts; the chart computes the digests), and the operator's own copy of
 * CKS's node script. Whoever may write ConfigMaps in the operator's namespace can change a script's
 * text, but not the list: a changed script is refused before any node is cordoned, and the digest
 * recorded on the Job ({@link UpgradeJob#ANNOTATION_SCRIPT_SHA256}) stops it at the node if it was
 * changed after this check.
 */
public final class ScriptTrust {
    private final Set<String> allowed;

    public ScriptTrust(Set<String> configuredSha256) {
        Set<String> digests = new TreeSet<>();
        configuredSha256.forEach(d -> digests.add(d.strip().toLowerCase(Locale.ROOT)));
        digests.add(sha256(CloudStackIsoExecutor.script()));
        this.allowed = Set.copyOf(digests);
    }

    /** What the check found. */
    public sealed interface Verdict {
    }

    /** The script may run; the Job records this digest. */
    public record Trusted(String sha256) implements Verdict {
    }

    /** A sentence for the NodeUpgrade's condition: which script, what is wrong, what to do. */
    public record Refused(String message) implements Verdict {
    }

    /** Reads the script from its ConfigMap in the operator's namespace and judges it. */
    public Verdict check(KubernetesClient client, String namespace, String configMap, String key) {
        ConfigMap found = client.configMaps().inNamespace(namespace).withName(configMap).get();
        return judge(namespace, configMap, key, found == null ? null : found.getData());
    }

    /** Pure: the verdict on the ConfigMap's data (null when the ConfigMap does not exist). */
    public Verdict judge(String namespace, String configMap, String key, Map<String, String> data) {
        String where = "ConfigMap " + namespace + "/" + configMap;
        if (data == null) {
            return new Refused("The upgrade script's " + where + " does not exist; install it with the Helm value upgrade.scripts.");
        }
        String script = data.get(key);
        if (script == null) {
            return new Refused(where + " has no key " + key + " (it has: " + String.join(", ", new TreeSet<>(data.keySet()))
                    + "); fix executor.script.configMapRef.key.");
        }
        String digest = sha256(script);
        if (!allowed.contains(digest)) {
            return new Refused("The upgrade script " + where + " key " + key + " has sha256 " + digest
                    + ", which the operator's configuration does not list: it was changed, or never allowed. Nothing was cordoned. "
                    + "Scripts that run as root on the nodes are installed with the Helm value upgrade.scripts (the chart lists their digests).");
        }
        return new Trusted(digest);
    }

    public static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
