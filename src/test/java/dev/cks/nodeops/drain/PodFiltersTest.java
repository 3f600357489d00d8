package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.PodVerdict.Action;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

class PodFiltersTest {
    private static final Instant NOW = Instant.parse("2026-05-01T10:00:00Z");

    private static PodBuilder pod(String name) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).addToLabels("app", "web").endMetadata()
                .withNewSpec().endSpec().withNewStatus().withPhase("Running").endStatus();
    }

    private static PodBuilder ownedBy(PodBuilder pod, String kind) {
        return pod.editMetadata().addNewOwnerReference().withKind(kind).withName("owner").withController(true).withApiVersion("apps/v1")
                .withUid("u").endOwnerReference().endMetadata();
    }

    private static Pod replicated(String name) {
        return ownedBy(pod(name), "ReplicaSet").build();
    }

    private static PodBuilder withEmptyDir(PodBuilder pod) {
        return pod.editSpec().addNewVolume().withName("tmp").withNewEmptyDir().endEmptyDir().endVolume().endSpec();
    }

    @Test
    void replicatedPodsAreEvicted() {
        assertThat(PodFilters.forOptions(new DrainOptions(), NOW).verdict(replicated("web-1")).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void mirrorPodsAreSkipped() {
        Pod mirror = pod("etcd-cp").editMetadata().addToAnnotations(PodFilters.MIRROR_ANNOTATION, "abc").endMetadata().build();
        PodVerdict verdict = PodFilters.mirror(mirror);
        assertThat(verdict.action()).isEqualTo(Action.SKIP);
        assertThat(verdict.reason()).contains("mirror pod").endsWith("shop/etcd-cp");
        assertThat(PodFilters.forOptions(new DrainOptions(), NOW).verdict(mirror).action()).as("before the no-controller refusal").isEqualTo(Action.SKIP);
    }

    @Test
    void daemonSetPodsAreIgnoredOrRefusedNamingTheOption() {
        Pod agent = ownedBy(pod("agent-x"), "DaemonSet").build();
        assertThat(PodFilters.daemonSet(agent, true).action()).isEqualTo(Action.SKIP);
        PodVerdict refused = PodFilters.daemonSet(agent, false);
        assertThat(refused.action()).isEqualTo(Action.REFUSE);
        assertThat(refused.reason()).isEqualTo("cannot delete DaemonSet-managed pods (use ignoreDaemonSets: true): shop/agent-x");
        assertThat(PodFilters.daemonSet(replicated("web-1"), false).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void emptyDirPodsNeedDeleteEmptyDirData() {
        Pod scratch = withEmptyDir(ownedBy(pod("web-1"), "ReplicaSet")).build();
        assertThat(PodFilters.localStorage(scratch, true).action()).isEqualTo(Action.EVICT);
        PodVerdict refused = PodFilters.localStorage(scratch, false);
        assertThat(refused.action()).isEqualTo(Action.REFUSE);
        assertThat(refused.reason()).isEqualTo("cannot delete pods with local storage (use deleteEmptyDirData: true): shop/web-1");
        assertThat(PodFilters.localStorage(replicated("web-2"), false).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void podsWithoutControllerNeedForce() {
        Pod solo = pod("solo").build();
        PodVerdict refused = PodFilters.unreplicated(solo, false);
        assertThat(refused.action()).isEqualTo(Action.REFUSE);
        assertThat(refused.reason()).startsWith("cannot delete pods that no controller manages").contains("(use force: true)").endsWith(": shop/solo");
        assertThat(PodFilters.unreplicated(solo, true).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void finishedPodsAlwaysGo() {
        DrainOptions strict = new DrainOptions();
        strict.setDeleteEmptyDirData(false);
        strict.setForce(false);
        for (String phase : new String[] {"Succeeded", "Failed"}) {
            Pod done = withEmptyDir(pod("job-" + phase)).editStatus().withPhase(phase).endStatus().build();
            assertThat(PodFilters.forOptions(strict, NOW).verdict(done).action()).as(phase).isEqualTo(Action.EVICT);
        }
    }

    @Test
    void podSelectorSkipsPodsItDoesNotMatch() {
        DrainOptions options = new DrainOptions();
        options.setPodSelector("app=api");
        PodVerdict verdict = PodFilters.forOptions(options, NOW).verdict(pod("solo").build());
        assertThat(verdict.action()).as("not selected: not even refused for lacking a controller").isEqualTo(Action.SKIP);
        assertThat(verdict.reason()).isEqualTo("does not match the drain's selector 'app=api': shop/solo");
        assertThat(PodFilters.selector(replicated("w"), PodSelector.parse("app in (web,api)")).action()).isEqualTo(Action.EVICT);
    }

    @Test
    void podsDeletedLongerAgoThanSkipWaitAreNotWaitedFor() {
        Pod deleted = replicated("web-1");
        deleted.getMetadata().setDeletionTimestamp("2026-05-01T09:59:00Z");
        assertThat(PodFilters.deletedLongAgo(deleted, 30, NOW).action()).isEqualTo(Action.SKIP);
        assertThat(PodFilters.deletedLongAgo(deleted, 60, NOW).action()).as("exactly 60 s is not longer than 60 s").isEqualTo(Action.EVICT);
        assertThat(PodFilters.deletedLongAgo(deleted, 0, NOW).action()).as("0 waits for all").isEqualTo(Action.EVICT);
        assertThat(PodFilters.deletedLongAgo(replicated("web-2"), 30, NOW).action()).isEqualTo(Action.EVICT);
        assertThat(PodFilters.deletedLongAgo(deleted, 30, NOW).reason()).contains("skipWaitForDeleteTimeoutSeconds").endsWith("shop/web-1");
    }

    @Test
    void theFirstObjectionDecidesInKubectlOrder() {
        DrainOptions options = new DrainOptions();
        options.setIgnoreDaemonSets(false);
        options.setDeleteEmptyDirData(false);
        Pod both = withEmptyDir(ownedBy(pod("agent"), "DaemonSet")).build();
        assertThat(PodFilters.forOptions(options, NOW).verdict(both).reason()).contains("ignoreDaemonSets");
        assertThat(PodFilters.forOptions(new DrainOptions(), NOW).verdict(pod("x").withMetadata(null).editOrNewMetadata()
                .withNamespace("a").withName("b").withLabels(Map.of()).endMetadata().build()).reason()).contains("force: true");
    }
}
