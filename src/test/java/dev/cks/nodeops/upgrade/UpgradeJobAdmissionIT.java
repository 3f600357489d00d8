package dev.cks.nodeops.upgrade;

import static dev.cks.nodeops.upgrade.UpgradeBed.FROM;
import static dev.cks.nodeops.upgrade.UpgradeBed.nodeStatus;
import static dev.cks.nodeops.upgrade.UpgradeBed.phase;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.testbed.TestBed;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;

/**
 * The upgrade Job is judged by the API server before its node is touched: here the operator runs in a
 * namespace whose Pod Security (baseline) refuses privileged pods, as a namespace without the chart's
 * label would on a cluster whose default is stricter than privileged.
 */
class UpgradeJobAdmissionIT extends NodeUpgradeScenario {
    private static final String NAMESPACE = "cks-node-operator-baseline";
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade \"$2\"\n";

    UpgradeJobAdmissionIT() {
        super("nuadm");
    }

    @Override
    protected Map<String, String> prepare(TestBed shared) {
        shared.client().namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE)
                .addToLabels("pod-security.kubernetes.io/enforce", "baseline").endMetadata().build()).serverSideApply();
        shared.client().configMaps().inNamespace(NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName("upgrade").endMetadata().addToData("upgrade.sh", SCRIPT).build()).serverSideApply();
        return Map.of("cks.namespace", NAMESPACE, "cks.upgrade.script-sha256", ScriptTrust.sha256(SCRIPT));
    }

    @Override
    protected void finish() {
        testBed.client().namespaces().withName(NAMESPACE).delete();
    }

    @Test
    void aNamespaceWhosePodSecurityRefusesTheJobsPodFailsTheNodeBeforeItIsCordoned() {
        String worker = bed.worker(FROM);

        bed.create("nu-baseline", UpgradeBed.script("upgrade", "upgrade.sh"), spec -> { });
        NodeUpgrade failed = bed.await("nu-baseline", Duration.ofSeconds(90), phase(NodeUpgradeStatus.Phase.Failed));

        assertThat(nodeStatus(failed, worker).getError()).contains("would be refused by the API server")
                .contains("PodSecurity").contains("privileged").contains("Nothing was cordoned");
        assertThat(nodeStatus(failed, worker).getCordonedByUs()).as("never cordoned").isNull();
        assertThat(bed.events("nu-baseline")).extracting(io.fabric8.kubernetes.api.model.Event::getReason).doesNotContain("Cordoned", "Draining");
        assertThat(testBed.client().batch().v1().jobs().inNamespace(NAMESPACE).list().getItems()).as("no Job made for real").isEmpty();
        assertThat(testBed.client().pods().inNamespace(NAMESPACE).list().getItems()).as("no pod made for real").isEmpty();
        assertThat(kubelets.jobsOn(List.of(worker))).isEmpty();
        bed.assertReleased(worker, false);
    }
}
