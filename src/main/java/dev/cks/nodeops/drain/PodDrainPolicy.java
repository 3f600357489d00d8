package dev.cks.nodeops.drain;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * What a pod's own annotations ask of a drain (as Cluster API's MachineDrainRule asks per workload):
 * <ul>
 * <li>{@value #BEHAVIOR}: {@code skip} leaves the pod on the node and the drain does not wait for it;
 * {@code wait-completed} evicts nothing but holds the drain until the pod has completed (or is gone);
 * {@code drain} (the default) evicts it.</li>
 * <li>{@value #ORDER}: an integer, 0 unless set; pods of a lower order are evicted first and the next
 * order starts only when they are all gone.</li>
 * </ul>
 * Pure. A value the drain cannot read refuses the drain (nothing is evicted), with the pod and the value named.
 */
public final class PodDrainPolicy {
    public static final String BEHAVIOR = "nodeops.cks.dev/drain";
    public static final String ORDER = "nodeops.cks.dev/drain-order";
    public static final String SKIP = "skip";
    public static final String WAIT_COMPLETED = "wait-completed";
    public static final String DRAIN = "drain";

    private PodDrainPolicy() {
    }

    /** The pod filter of the behavior annotation; a finished pod annotated wait-completed has completed, so it is treated as any other. */
    public static PodVerdict behavior(Pod pod) {
        String value = annotations(pod).get(BEHAVIOR);
        PodVerdict verdict = switch (value == null ? DRAIN : value) {
            case DRAIN -> PodVerdict.evict();
            case SKIP -> PodVerdict.skip("annotated " + BEHAVIOR + ": " + SKIP + ", left on the node: " + PodFilters.name(pod));
            case WAIT_COMPLETED -> PodFilters.finished(pod) ? PodVerdict.evict()
                    : PodVerdict.waitFor("annotated " + BEHAVIOR + ": " + WAIT_COMPLETED + ", the drain waits until it has completed: " + PodFilters.name(pod));
            default -> PodVerdict.refuse("pod " + PodFilters.name(pod) + " has " + BEHAVIOR + ": '" + value + "', which is not one of "
                    + SKIP + ", " + WAIT_COMPLETED + " or " + DRAIN + "; fix the annotation (nothing was evicted)");
        };
        // A pod to evict needs an order the drain can read.
        return verdict.action() == PodVerdict.Action.EVICT && order(pod) == null ? PodVerdict.refuse(badOrder(pod)) : verdict;
    }

    /** The pod's drain order; 0 when unset, null when the annotation is not an integer. */
    public static Integer order(Pod pod) {
        String value = annotations(pod).get(ORDER);
        if (value == null) {
            return 0;
        }
        try {
            return Integer.parseInt(value.strip());
        } catch (NumberFormatException notAnInteger) {
            return null;
        }
    }

    /** The lowest order among the pods still to go; only pods of that order are evicted now. */
    public static int current(List<Pod> toGo) {
        return toGo.stream().map(PodDrainPolicy::order).filter(java.util.Objects::nonNull).mapToInt(Integer::intValue).min().orElse(0);
    }

    private static String badOrder(Pod pod) {
        return "pod " + PodFilters.name(pod) + " has " + ORDER + ": '" + annotations(pod).get(ORDER) + "', which is not an integer; "
                + "fix the annotation (nothing was evicted)";
    }

    private static Map<String, String> annotations(Pod pod) {
        return pod.getMetadata().getAnnotations() == null ? Map.of() : pod.getMetadata().getAnnotations();
    }
}
