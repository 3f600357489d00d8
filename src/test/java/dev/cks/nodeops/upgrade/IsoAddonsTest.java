package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.upgrade.IsoAddons.Addon;
import dev.cks.nodeops.upgrade.IsoAddons.Outcome;

/** The addon lines of the CloudStackIso node script's log (upgrade-kubernetes.sh), read into the node's status. Pure. */
class IsoAddonsTest {

    @Test
    void readsEachAddonLineAmongKubectlsOutput() {
        IsoAddons.Report report = IsoAddons.parse("""
                12:03:09 replacing kubelet and kubectl
                12:03:10 kubectl apply -f network.yaml (attempt 1 of 12)
                The connection to the server 10.0.0.5:6443 was refused - did you specify the right host or port?
                12:03:20 kubectl apply -f network.yaml (attempt 2 of 12)
                daemonset.apps/calico-node configured
                cks-addon network.yaml applied
                cks-addon headlamp.yaml failed kubectl apply exited 1 after 12 attempts
                12:03:40 node upgraded to v1.35.4
                """);

        assertThat(report.addons()).containsExactly(new Addon("network.yaml", Outcome.applied, null),
                new Addon("headlamp.yaml", Outcome.failed, "kubectl apply exited 1 after 12 attempts"));
        assertThat(report.failed()).extracting(Addon::manifest).containsExactly("headlamp.yaml");
        assertThat(report.summary()).isEqualTo("network.yaml applied; headlamp.yaml failed (kubectl apply exited 1 after 12 attempts)");
    }

    @Test
    void anIsoWithoutAManifestIsReportedNotFailed() {
        IsoAddons.Report report = IsoAddons.parse("cks-addon network.yaml applied\n"
                + "cks-addon dashboard.yaml absent the ISO has neither headlamp.yaml nor dashboard.yaml\n");

        assertThat(report.failed()).isEmpty();
        assertThat(report.summary()).isEqualTo("network.yaml applied; dashboard.yaml absent (the ISO has neither headlamp.yaml nor dashboard.yaml)");
        assertThat(IsoAddons.message("ctl-1", "ops/upgrade-ctl-1-abc", report)).doesNotContain("by hand");
    }

    @Test
    void aLogWithoutAddonLinesIsUnknownAndSaysWhereToLook() {
        IsoAddons.Report report = IsoAddons.parse("");

        assertThat(report.known()).isFalse();
        assertThat(IsoAddons.parse(null).known()).isFalse();
        assertThat(report.summary()).startsWith("unknown");
        assertThat(IsoAddons.message("ctl-1", "ops/upgrade-ctl-1-abc", report)).contains("kubectl logs -n ops job/upgrade-ctl-1-abc");
    }

    @Test
    void aLineThatMerelyMentionsTheMarkerIsNotAnAddon() {
        IsoAddons.Report report = IsoAddons.parse("12:03:10 kubectl apply -f network.yaml\n"
                + "error: cks-addons.yaml is not a file\ncks-addon network.yaml configured\n");

        assertThat(report.known()).isFalse();
    }

    @Test
    void theLastLineOfAManifestWins() {
        IsoAddons.Report report = IsoAddons.parse("cks-addon network.yaml failed timeout\ncks-addon network.yaml applied\n");

        assertThat(report.addons()).containsExactly(new Addon("network.yaml", Outcome.applied, null));
    }

    @Test
    void aFailureMessageNamesTheManifestAndTheCommandThatAppliesItByHand() {
        IsoAddons.Report report = IsoAddons.parse("cks-addon network.yaml failed no /etc/kubernetes/admin.conf on this node to apply it with\n");

        assertThat(IsoAddons.message("ctl-1", "ops/upgrade-ctl-1-abc", report))
                .startsWith("The ISO's addons on node ctl-1: network.yaml failed (no /etc/kubernetes/admin.conf on this node to apply it with).")
                .contains("The node is upgraded all the same. Apply network.yaml of the target version's binaries ISO by hand")
                .contains("kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f <file>");
    }

    /** The script prints exactly the lines this class reads; a change on one side without the other fails here. */
    @Test
    void theShippedScriptPrintsTheLinesThisParserReads() {
        String script = CloudStackIsoExecutor.script();
        assertThat(script).contains("cks-addon $*").contains("addon \"$1\" applied").contains("addon \"$1\" failed")
                .contains("addon network.yaml absent").contains("addon network.yaml skipped").contains("APPLY_ADDONS=\"${5:-true}\"").contains("kubectl --kubeconfig \"$ADMIN_CONF\" apply -f")
                .contains("ADMIN_CONF=/etc/kubernetes/admin.conf");
        assertThat(script.indexOf("apply_addon network.yaml")).as("addons after the kubelet restart")
                .isGreaterThan(script.indexOf("systemctl restart kubelet"));
    }
}
