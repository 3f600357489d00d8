package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What the CloudStackIso node script did with the ISO's addon manifests (network.yaml, headlamp.yaml or
 * dashboard.yaml) on the first control-plane node, read from the lines `cks-addon <file> <outcome> [why]`
 * it prints at the end of its log. Pure.
 *
 * A failed apply does not fail the node: kubeadm and the kubelet are upgraded by then, and a retry would
 * run `kubeadm upgrade apply` again for the sake of a manifest. It is reported (condition AddonsApplied
 * False, a Warning event) with the command that applies it by hand.
 */
public final class IsoAddons {
    /** The marker the script prints, one line per addon; a time stamp or other prefix before it is allowed. */
    private static final Pattern LINE = Pattern.compile("(?:^|\\s)cks-addon (\\S+) (applied|failed|absent|skipped)(?: (.*))?$");

    public enum Outcome {
        /** `kubectl apply -f` succeeded. */
        applied,
        /** It did not (the reason says why); the node is upgraded all the same. */
        failed,
        /** The ISO does not carry the manifest: nothing to apply. */
        absent,
        /** Not applied because spec.executor.cloudStackIso.applyAddons is false. */
        skipped
    }

    /** One addon manifest and what became of it. */
    public record Addon(String manifest, Outcome outcome, String reason) {
        String sentence() {
            return manifest + " " + outcome + (reason == null || reason.isBlank() ? "" : " (" + reason.strip() + ")");
        }
    }

    /** What the log says; {@code addons} is empty when it holds no marker (the log was not read, or cut off). */
    public record Report(List<Addon> addons) {
        public boolean known() {
            return !addons.isEmpty();
        }

        /** Every addon left alone on purpose (spec.executor.cloudStackIso.applyAddons false). */
        public boolean skipped() {
            return known() && addons.stream().allMatch(addon -> addon.outcome() == Outcome.skipped);
        }

        public List<Addon> failed() {
            return addons.stream().filter(addon -> addon.outcome() == Outcome.failed).toList();
        }

        /** For the node's status: e.g. "network.yaml applied; headlamp.yaml applied". */
        public String summary() {
            return known() ? addons.stream().map(Addon::sentence).collect(Collectors.joining("; "))
                    : "unknown: the upgrade Job's log could not be read or holds no cks-addon line";
        }
    }

    private IsoAddons() {
    }

    /** The addon lines of a Job's log, in the order the script printed them; the last line of a manifest wins. */
    public static Report parse(String log) {
        List<Addon> addons = new ArrayList<>();
        if (log != null) {
            for (String line : log.split("\\R")) {
                Matcher matcher = LINE.matcher(line.strip());
                if (matcher.find()) {
                    String manifest = matcher.group(1);
                    addons.removeIf(addon -> addon.manifest().equals(manifest));
                    addons.add(new Addon(manifest, Outcome.valueOf(matcher.group(2)), matcher.group(3)));
                }
            }
        }
        return new Report(List.copyOf(addons));
    }

    /**
     * The message of the node's AddonsApplied condition and, when one failed or the outcome is unknown, of its
     * Warning event: which manifests were applied, and otherwise what the owner does about it.
     */
    public static String message(String nodeName, String job, Report report) {
        String head = "The ISO's addons on node " + nodeName + ": " + report.summary() + ".";
        if (!report.known()) {
            return head + " Read the log of the upgrade Job " + job + " (kubectl logs -n " + job.replace("/", " job/") + ").";
        }
        if (report.failed().isEmpty()) {
            return head;
        }
        // The ISO is detached once the Job ends: the owner takes the file from the target version's ISO.
        return head + " The node is upgraded all the same. Apply " + report.failed().stream().map(Addon::manifest).collect(Collectors.joining(" and "))
                + " of the target version's binaries ISO by hand, on the node: kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f <file>"
                + " (kubectl apply may be repeated safely).";
    }
}
