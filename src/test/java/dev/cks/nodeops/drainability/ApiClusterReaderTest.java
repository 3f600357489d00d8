package dev.cks.nodeops.drainability;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.LeanCopies;
import dev.cks.nodeops.upgrade.NodeSelection;
import io.fabric8.kubernetes.api.model.PodBuilder;

class ApiClusterReaderTest {
    /** The reader's lean copies of pods get the same report as the pods as listed (what each field keeps: LeanCopiesTest). */
    @Test
    void leanCopiesGetTheSameReportAsThePodsAsListed() {
        ClusterShapes full = new ClusterShapes().workers("w-1", "w-2", "w-3", "w-6").deploymentPod("web", "web-1", "w-1").budget("web-pdb", "web", 1, 0)
                .barePod("debug", "w-2").emptyDirPod("cache", "cache-1", "w-3")
                .pinnedPod("db", "db-1", "w-6").pinnedPod("db", "db-2", "w-6").budget("db-pdb", "db", 2, 1);
        full.pods.replaceAll(pod -> new PodBuilder(pod).editMetadata().addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{…}")
                .addNewManagedField().withManager("kubectl").endManagedField().endMetadata()
                .editSpec().editFirstContainer().addNewEnv().withName("SECRET_SAUCE").withValue("x").endEnv().endContainer().endSpec()
                .editStatus().addNewContainerStatus().withName("c").endContainerStatus().endStatus().build());
        ClusterShapes lean = new ClusterShapes();
        lean.nodes.addAll(full.nodes);
        lean.budgets.addAll(full.budgets);
        LeanCopies copies = new LeanCopies();
        full.pods.forEach(pod -> lean.pods.add(copies.pod(new PodBuilder(pod).build())));
        DrainAssumptions strict = new DrainAssumptions();
        strict.setDeleteEmptyDirData(false);
        Instant now = Instant.parse("2026-12-03T10:00:00Z");

        assertThat(Drainability.assess(lean.reading(), NodeSelection.everything(), strict.toDrainOptions(), now))
                .isEqualTo(Drainability.assess(full.reading(), NodeSelection.everything(), strict.toDrainOptions(), now));
    }
}
