package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;

/**
 * The NodeUpgrade the API server holds stays within {@link dev.cks.nodeops.testing.StatusBound} throughout a rollout,
 * on the real control plane: 100 KWOK workers with 10 pods each (no controller, evicted with force), upgraded in one
 * wave (maxUnavailable 100: the most nodes in progress at once, in the least of the default run's time), the packaged
 * operator as its own process; the other actor is the kubelet (KWOK, and {@code KubeletUpgradeSimulation}
 * bringing a node back at the target when its Job succeeds). Guards in the default run what
 * {@link BenchmarkStatusSizeIT} measures at 1,000 nodes: only the bed shows that fields the operator leaves out of
 * its status really leave the stored object (its status writes are server-side applies).
 */
class NodeUpgradeStatusSizeIT extends NodeUpgradeScenario {
    static final String SCRIPT_CONFIGMAP = "nu-size-kubeadm-upgrade";
    static final String SCRIPT = "#!/bin/sh\nset -eu\nkubeadm upgrade node\n";

    NodeUpgradeStatusSizeIT() {
        super("size");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        return scriptTrusted(shared);
    }

    /** The script the runs use, in the operator's namespace, and the operator property that trusts it. */
    static Map<String, String> scriptTrusted(TestBed shared) {
        shared.client().configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName(SCRIPT_CONFIGMAP).endMetadata().addToData("upgrade.sh", SCRIPT).build()).serverSideApply();
        return Map.of("cks.upgrade.script-sha256", ScriptTrust.sha256(SCRIPT));
    }

    @Test
    void aHundredDenseWorkersKeepTheObjectWithinItsBoundThroughout() throws Exception {
        StatusSizeRun.Result result = StatusSizeRun.run(testBed, "size-100", SCRIPT_CONFIGMAP, 100, 10, 100, Duration.ofMinutes(10));

        System.out.println("[status size] " + result.report());
        result.assertWithinBound();
    }
}
