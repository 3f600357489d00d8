package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.KubernetesSupportedVersion;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;

class CloudStackIsoExecutorTest {
    private static KubernetesSupportedVersion version(String id, String semver, String iso, String isoState) {
        return new KubernetesSupportedVersion(id, "v" + semver, semver, iso, "iso-" + semver, isoState, "Enabled", null, true, true, 2, 2048, null);
    }

    private final List<KubernetesSupportedVersion> versions = List.of(
            version("v-1", "1.33.1", "iso-1", "Ready"),
            version("v-10", "1.33.10", "iso-10", "Ready"),
            version("v-new", "1.34.0", "iso-new", "Uploading"));

    @Test
    void picksTheIsoOfTheVersionWhoseSemanticVersionIsExactlyTheTarget() {
        assertThat(CloudStackIsoExecutor.pickIso(versions, null, "v1.33.1")).isEqualTo("iso-1");
        assertThat(CloudStackIsoExecutor.pickIso(versions, "", "1.33.10+vendor.1")).isEqualTo("iso-10");
        assertThat(CloudStackIsoExecutor.pickIso(versions, "v-10", "1.33.10")).isEqualTo("iso-10");
    }

    @Test
    void refusesWithASentenceWhenNoVersionFitsOrItsIsoIsNotReady() {
        assertThatThrownBy(() -> CloudStackIsoExecutor.pickIso(versions, null, "1.33.2"))
                .hasMessageContaining("no Kubernetes supported version 1.33.2").hasMessageContaining("Script executor");
        assertThatThrownBy(() -> CloudStackIsoExecutor.pickIso(versions, "v-1", "1.33.10")).hasMessageContaining("make them agree");
        assertThatThrownBy(() -> CloudStackIsoExecutor.pickIso(versions, null, "1.34.0")).hasMessageContaining("not usable");
    }

    @Test
    void cksArgumentsAreTheBareVersionWhetherFirstControlAndNoEject() {
        assertThat(CloudStackIsoExecutor.arguments("v1.33.4", Action.Apply, true)).containsExactly("1.33.4", "true", "false", "false", "true");
        assertThat(CloudStackIsoExecutor.arguments("1.33.4", Action.Node, true)).containsExactly("1.33.4", "false", "false", "false", "true");
        assertThat(CloudStackIsoExecutor.arguments("1.33.4", Action.Apply, false)).containsExactly("1.33.4", "true", "false", "false", "false");
    }

    @Test
    void theShippedNodeScriptIsInTheJar() {
        assertThat(CloudStackIsoExecutor.script()).contains("kubeadm upgrade apply").contains("kubeadm upgrade node")
                .contains("systemctl restart kubelet").contains("iso9660");
    }
}
