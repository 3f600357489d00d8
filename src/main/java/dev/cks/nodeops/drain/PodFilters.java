package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import dev.cks.nodeops.common.Timestamps;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Which pods a drain removes, as kubectl's drain decides it: a list of named filters applied in
 * order, the first that does not say "evict" decides. Every refusal names the option that overrides it.
 * The pod's own annotations ({@link PodDrainPolicy}) come right after the drain's selector.
 */
public final class PodFilters {
    /** One filter: a verdict for the pod, or {@link PodVerdict#evict()} when it has no objection. */
    @FunctionalInterface
    public interface PodFilter {
        PodVerdict check(Pod pod);
    }

    static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

    private final List<PodFilter> filters;

    private PodFilters(List<PodFilter> filters) {
        this.filters = filters;
    }

    /**
     * The filters for these options; kubectl's order, so the same pod gets the same answer.
     *
     * @throws PodSelector.InvalidSelector when the deprecated podSelector cannot be parsed
     */
    public static PodFilters forOptions(DrainOptions options, Instant now) {
        PodSelector selector = options.podSelection();
        int skipWaitSeconds = options.getSkipWaitForDeleteTimeoutSeconds() == null ? 0 : options.getSkipWaitForDeleteTimeoutSeconds();
        return new PodFilters(List.of(
                pod -> selector(pod, selector),
                // The pod's own word comes before kubectl's rules: a bare pod annotated skip is left, not refused.
                PodDrainPolicy::behavior,
                pod -> deletedLongAgo(pod, skipWaitSeconds, now),
                pod -> daemonSet(pod, !Boolean.FALSE.equals(options.getIgnoreDaemonSets())),
                PodFilters::mirror,
                pod -> localStorage(pod, !Boolean.FALSE.equals(options.getDeleteEmptyDirData())),
                pod -> unreplicated(pod, Boolean.TRUE.equals(options.getForce()))));
    }

    public PodVerdict verdict(Pod pod) {
        for (PodFilter filter : filters) {
            PodVerdict verdict = filter.check(pod);
            if (verdict.action() != PodVerdict.Action.EVICT) {
                return verdict;
            }
        }
        return PodVerdict.evict();
    }

    public static PodVerdict selector(Pod pod, PodSelector selector) {
        return selector.matches(pod.getMetadata().getLabels()) ? PodVerdict.evict()
                : PodVerdict.skip("does not match the drain's selector '" + selector + "': " + name(pod));
    }

    /**
     * A pod deleted longer ago than skipWaitForDeleteTimeoutSeconds is not waited for: its node is
     * probably gone or its finalizer stuck, and waiting would only burn the attempt.
     */
    public static PodVerdict deletedLongAgo(Pod pod, int skipWaitSeconds, Instant now) {
        Instant deleted = Timestamps.parse(pod.getMetadata().getDeletionTimestamp());
        if (skipWaitSeconds > 0 && deleted != null && Duration.between(deleted, now).getSeconds() > skipWaitSeconds) {
            return PodVerdict.skip("deleted more than " + skipWaitSeconds + "s ago (skipWaitForDeleteTimeoutSeconds), not waited for: " + name(pod));
        }
        return PodVerdict.evict();
    }

    public static PodVerdict daemonSet(Pod pod, boolean ignoreDaemonSets) {
        OwnerReference controller = controllerOf(pod);
        if (controller == null || !"DaemonSet".equals(controller.getKind())) {
            return PodVerdict.evict();
        }
        // The DaemonSet controller ignores unschedulable and would put the pod straight back.
        return ignoreDaemonSets ? PodVerdict.skip("managed by DaemonSet " + controller.getName() + ", ignored: " + name(pod))
                : PodVerdict.refuse("cannot delete DaemonSet-managed pods (use ignoreDaemonSets: true): " + name(pod));
    }

    public static PodVerdict mirror(Pod pod) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        return annotations != null && annotations.containsKey(MIRROR_ANNOTATION)
                ? PodVerdict.skip("a mirror pod of a static pod, which only its kubelet can remove: " + name(pod))
                : PodVerdict.evict();
    }

    public static PodVerdict localStorage(Pod pod, boolean deleteEmptyDirData) {
        if (finished(pod) || deleteEmptyDirData || pod.getSpec().getVolumes() == null
                || pod.getSpec().getVolumes().stream().noneMatch(v -> v.getEmptyDir() != null)) {
            return PodVerdict.evict();
        }
        return PodVerdict.refuse("cannot delete pods with local storage (use deleteEmptyDirData: true): " + name(pod));
    }

    public static PodVerdict unreplicated(Pod pod, boolean force) {
        if (finished(pod) || controllerOf(pod) != null || force) {
            return PodVerdict.evict();
        }
        return PodVerdict.refuse("cannot delete pods that no controller manages, they would not be recreated (use force: true): " + name(pod));
    }

    /** Succeeded and Failed pods hold nothing worth protecting, so kubectl always removes them. */
    static boolean finished(Pod pod) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    public static OwnerReference controllerOf(Pod pod) {
        List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
        return owners == null ? null : owners.stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst().orElse(null);
    }

    public static String name(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }
}
