package dev.cks.nodeops.audit;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The host names CKS gives a cluster's VMs: {@code <prefix>-control-<hex>}, {@code <prefix>-node-<hex>}
 * and {@code <prefix>-etcd-<n>-<hex>}, where the hex is the creation time in milliseconds.
 *
 * <p>What we assume about CloudStack's {@code getKubernetesClusterNodeNamePrefix}
 * (KubernetesClusterResourceModifierActionWorker), written from memory of the upstream code, not
 * copied: the prefix is the cluster name when it is a valid host-name label (letters, digits and
 * hyphens, starting with a letter); otherwise the characters that are not letters, digits or
 * hyphens are dropped (the cluster's id stands in when nothing is left) and {@code k8s-} is put in
 * front; a name longer than a label's 63 characters is not a valid label either. The prefix is then
 * cut to 43 characters so that {@code -control-} plus an 11-digit hex suffix still fits the
 * 63-character label limit; CloudStack releases before that change cut to 40,
 * and their VMs keep the old names, so both cuts are accepted. Host names are compared
 * case-insensitively because kubelet and DNS lower-case them and some releases lower-case the prefix
 * while others keep the name's case.
 */
public final class CksNodeNames {
    public enum Role { CONTROL, NODE, ETCD }

    static final int PREFIX_LENGTH = 43;
    static final int OLDER_PREFIX_LENGTH = 40;
    static final String FALLBACK_PREFIX = "k8s-";
    private static final int MAX_LABEL_LENGTH = 63;

    private static final Pattern VALID_LABEL = Pattern.compile("[a-z][a-z0-9-]*");
    private static final Pattern NOT_LABEL_CHARS = Pattern.compile("[^a-z0-9-]");
    /**
     * CloudStack writes the suffix with Long.toHexString(currentTimeMillis): 11 digits today; a
     * lower bound keeps words like {@code -node-cafe} (a user's own VM) out.
     */
    private static final Pattern SUFFIX = Pattern.compile("[0-9a-f]{6,16}");
    private static final Pattern ETCD_INDEX = Pattern.compile("[0-9]{1,3}");

    private final List<String> prefixes;

    private CksNodeNames(List<String> prefixes) {
        this.prefixes = prefixes;
    }

    /** The names of the cluster with this name and CloudStack id. */
    public static CksNodeNames of(String clusterName, String clusterId) {
        String name = clusterName == null ? "" : clusterName.toLowerCase(Locale.ROOT);
        String id = clusterId == null ? "" : clusterId.toLowerCase(Locale.ROOT);
        List<String> bases = new ArrayList<>();
        if (isLabel(name)) {
            bases.add(name);
        } else if (isLabel(name.substring(0, Math.min(name.length(), MAX_LABEL_LENGTH)))) {
            // Only too long: whether the length check sends it to the k8s- fallback is the one point we are
            // unsure of, so both readings are accepted; either is derived from this cluster's own name.
            bases.add(name);
            bases.add(fallbackPrefix(name, id));
        } else {
            bases.add(fallbackPrefix(name, id));
        }
        Set<String> cuts = new LinkedHashSet<>();
        bases.forEach(base -> cuts.add(cut(base, PREFIX_LENGTH)));
        bases.forEach(base -> cuts.add(cut(base, OLDER_PREFIX_LENGTH)));
        return new CksNodeNames(List.copyOf(cuts));
    }

    /** What NetUtils.verifyDomainNameLabel accepts as a host name: 1 to 63 characters, a letter first, no hyphen last. */
    private static boolean isLabel(String name) {
        return name.length() <= MAX_LABEL_LENGTH && VALID_LABEL.matcher(name).matches() && !name.endsWith("-");
    }

    private static String fallbackPrefix(String name, String clusterId) {
        String kept = NOT_LABEL_CHARS.matcher(name).replaceAll("");
        if (kept.isEmpty()) {
            kept = NOT_LABEL_CHARS.matcher(clusterId).replaceAll("");
        }
        return FALLBACK_PREFIX + kept;
    }

    private static String cut(String prefix, int length) {
        return prefix.length() > length ? prefix.substring(0, length) : prefix;
    }

    /** The prefixes this cluster's VM names may start with. */
    public List<String> prefixes() {
        return prefixes;
    }

    /** The longest text that every name of this cluster's VMs contains: what to ask CloudStack's keyword filter for. */
    public String keyword() {
        String shortest = prefixes.stream().min((a, b) -> Integer.compare(a.length(), b.length())).orElse("");
        for (int length = shortest.length(); length > 0; length--) {
            for (int start = 0; start + length <= shortest.length(); start++) {
                String candidate = shortest.substring(start, start + length);
                if (containedInAll(candidate)) {
                    return candidate;
                }
            }
        }
        return "";
    }

    private boolean containedInAll(String text) {
        return prefixes.stream().allMatch(prefix -> prefix.contains(text));
    }

    /** The role of a VM with this name if the name is one CKS gives this cluster's VMs. */
    public Optional<Role> roleOf(String vmName) {
        if (vmName == null) {
            return Optional.empty();
        }
        String name = vmName.toLowerCase(Locale.ROOT);
        for (String prefix : prefixes) {
            if (name.length() > prefix.length() + 1 && name.startsWith(prefix) && name.charAt(prefix.length()) == '-') {
                Optional<Role> role = roleOfRest(name.substring(prefix.length() + 1));
                if (role.isPresent()) {
                    return role;
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Role> roleOfRest(String rest) {
        if (rest.startsWith("control-")) {
            return suffixIsHex(rest.substring("control-".length())) ? Optional.of(Role.CONTROL) : Optional.empty();
        }
        if (rest.startsWith("node-")) {
            return suffixIsHex(rest.substring("node-".length())) ? Optional.of(Role.NODE) : Optional.empty();
        }
        if (rest.startsWith("etcd-")) {
            String afterRole = rest.substring("etcd-".length());
            int dash = afterRole.indexOf('-');
            if (dash > 0 && ETCD_INDEX.matcher(afterRole.substring(0, dash)).matches()
                    && suffixIsHex(afterRole.substring(dash + 1))) {
                return Optional.of(Role.ETCD);
            }
        }
        return Optional.empty();
    }

    private static boolean suffixIsHex(String suffix) {
        return SUFFIX.matcher(suffix).matches();
    }
}
