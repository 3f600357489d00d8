package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.upgrade.NodeSelection;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class ApiClusterReaderTest {
    /** A pruned pod gets the same verdicts as the full one, without what no verdict reads. */
    @Test
    void aPrunedPodKeepsWhatTheVerdictsReadAndDropsTheRest() {
        ClusterShapes full = new ClusterShapes().workers("w-1", "w-2", "w-3", "w-6").deploymentPod("web", "web-1", "w-1").budget("web-pdb", "web", 1, 0)
                .barePod("debug", "w-2").emptyDirPod("cache", "cache-1", "w-3")
                .pinnedPod("db", "db-1", "w-6").pinnedPod("db", "db-2", "w-6").budget("db-pdb", "db", 2, 1);
        full.pods.replaceAll(pod -> new PodBuilder(pod).editMetadata().addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{…}")
                .addNewManagedField().withManager("kubectl").endManagedField().endMetadata()
                .editSpec().editFirstContainer().addNewEnv().withName("SECRET_SAUCE").withValue("x").endEnv().endContainer().endSpec()
                .editStatus().addNewContainerStatus().withName("c").endContainerStatus().endStatus().build());
        ClusterShapes pruned = new ClusterShapes();
        pruned.nodes.addAll(full.nodes);
        pruned.budgets.addAll(full.budgets);
        full.pods.forEach(pod -> pruned.pods.add(ApiClusterReader.pruned(new PodBuilder(pod).build())));
        DrainAssumptions strict = new DrainAssumptions();
        strict.setDeleteEmptyDirData(false);
        Instant now = Instant.parse("2026-12-03T10:00:00Z");

        assertThat(Drainability.assess(pruned.reading(), NodeSelection.everything(), strict.toDrainOptions(), now))
                .isEqualTo(Drainability.assess(full.reading(), NodeSelection.everything(), strict.toDrainOptions(), now));
        Pod kept = pruned.pods.get(0);
        assertThat(kept.getMetadata().getManagedFields()).isNull();
        assertThat(kept.getMetadata().getAnnotations()).doesNotContainKey("kubectl.kubernetes.io/last-applied-configuration");
        assertThat(kept.getSpec().getContainers().get(0).getEnv()).isEmpty();
        assertThat(kept.getStatus().getContainerStatuses()).isEmpty();
        assertThat(kept.getStatus().getPhase()).isEqualTo("Running");
        assertThat(List.of(kept.getSpec().getNodeName())).containsExactly("w-1");
    }
}
