package dev.cks.nodeops.audit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * The keys of reported findings as stored in {@code status.reportedKeys}. Up to {@value #PLAIN_LIMIT}
 * keys are stored as they are, so users can read them. Above that, each key is stored as its kind
 * and a 12-hex-digit SHA-256 prefix ({@code node:#3f9a…}), about a third of a VM key's size, so the
 * status of a cluster with thousands of findings stays far below etcd's object size limit (about 19
 * bytes of JSON per key). The kind stays readable because node findings must be told apart while the
 * Node list is unreadable. With 48 bits, a collision, which would only hide one event, has odds
 * below one in a million at {@value #MAX_ENTRIES} keys. Lookups accept either form, so switching
 * between them loses nothing. Beyond {@value #MAX_ENTRIES} keys (about 400 kB) the rest is not
 * stored: those findings are then summarised again on every run rather than risk a status the API
 * server refuses.
 */
final class ReportedKeys {
    static final int PLAIN_LIMIT = 200;
    private static final String HASH_MARK = "#";
    static final int MAX_ENTRIES = 20_000;
    private static final int HASH_HEX_DIGITS = 12;

    private final Set<String> stored;

    ReportedKeys(Collection<String> stored) {
        this.stored = Set.copyOf(stored);
    }

    boolean isEmpty() {
        return stored.isEmpty();
    }

    boolean contains(String key) {
        return stored.contains(key) || stored.contains(hashed(key));
    }

    /** Stored entries of findings about Nodes, plain or hashed. */
    List<String> nodeEntries() {
        return stored.stream().filter(ReportedKeys::isNodeEntry).sorted().toList();
    }

    private static boolean isNodeEntry(String entry) {
        return entry.startsWith(Drift.nodeKey("")) || entry.startsWith(Drift.notANodeKey(""));
    }

    /** What to store for these keys: plain when few, hashed when many. Entries already hashed stay as they are. */
    static List<String> encode(Collection<String> keys) {
        if (keys.size() <= PLAIN_LIMIT) {
            return keys.stream().distinct().toList();
        }
        return keys.stream().map(key -> isHashed(key) ? key : hashed(key)).distinct().limit(MAX_ENTRIES).toList();
    }

    static boolean isHashed(String entry) {
        int colon = entry.indexOf(':');
        return colon >= 0 && entry.startsWith(HASH_MARK, colon + 1);
    }

    static String hashed(String key) {
        int colon = key.indexOf(':');
        String kind = colon < 0 ? "" : key.substring(0, colon + 1);
        return kind + HASH_MARK + HexFormat.of().formatHex(sha256(key)).substring(0, HASH_HEX_DIGITS);
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
