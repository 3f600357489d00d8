package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.cks.nodeops.drain.BlockedByReport.Cause;
import dev.cks.nodeops.drain.BlockedByReport.StuckPod;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * What the API server's answers to one round of evictions (or, when the drain gives up, of dry runs) say
 * about the pods: which are gone, which were evicted and are leaving, which a PodDisruptionBudget keeps
 * (429) and which failed. Pure: answers in, the outcome out.
 *
 * @param evicted the pods whose eviction the server accepted, in answer order; none in a dry run
 * @param gone how many pods were gone already (404, or a namesake under our UID precondition)
 * @param stuck the pods still on the node after their answer, with why, in answer order
 * @param refusedByBudget the pods refused with 429, in answer order
 * @param lastApiError the last refused or failed request with what it got, for {@link DrainState#getLastApiError()}; null when none was
 */
record EvictionOutcome(List<Pod> evicted, int gone, List<StuckPod> stuck, List<Pod> refusedByBudget, String lastApiError) {
    /** How the server answered one pod's request. */
    enum Answered {
        GONE("gone"), EVICTED("evicted"), REFUSED_BY_BUDGET("blocked"), FAILED("error");

        /** What the {@link EvictionListener} is told. */
        final String label;

        Answered(String label) {
            this.label = label;
        }

        static Answered of(Answer answer) {
            if (answer.gone()) {
                return GONE;
            }
            if (answer.accepted()) {
                return EVICTED;
            }
            return answer.tooManyRequests() ? REFUSED_BY_BUDGET : FAILED;
        }
    }

    /**
     * @param dryRun the answers are to dry runs: an accepted one means the pod could have gone, not that it goes
     * @param options whether the requests were evictions or deletes, for the error's wording
     */
    static EvictionOutcome of(Map<Pod, Answer> answers, boolean dryRun, DrainOptions options) {
        List<Pod> evicted = new ArrayList<>();
        List<StuckPod> stuck = new ArrayList<>();
        List<Pod> refusedByBudget = new ArrayList<>();
        String lastApiError = null;
        int gone = 0;
        for (Map.Entry<Pod, Answer> entry : answers.entrySet()) {
            Pod pod = entry.getKey();
            Answer answer = entry.getValue();
            switch (Answered.of(answer)) {
                case GONE -> gone++;
                case EVICTED -> {
                    if (dryRun) {
                        // The dry run would have been allowed: the attempt ran out just before this pod's turn.
                        stuck.add(StuckPod.of(pod, Cause.NOT_EVICTED_IN_TIME, ""));
                    } else {
                        evicted.add(pod);
                        stuck.add(StuckPod.of(pod, Cause.TERMINATING, "evicted just now"));
                    }
                }
                case REFUSED_BY_BUDGET -> {
                    refusedByBudget.add(pod);
                    String namespace = pod.getMetadata().getNamespace();
                    stuck.add(StuckPod.of(pod, Cause.DISRUPTION_BUDGET,
                            DisruptionBudgets.namedIn(answer.causes()).map(name -> namespace + "/" + name).orElse(answer.message())));
                    lastApiError = failure(pod, answer, options);
                }
                case FAILED -> {
                    stuck.add(StuckPod.of(pod, Cause.API_ERROR, answer.describe()));
                    lastApiError = failure(pod, answer, options);
                }
            }
        }
        return new EvictionOutcome(evicted, gone, stuck, refusedByBudget, lastApiError);
    }

    boolean refusedWith429() {
        return !refusedByBudget.isEmpty();
    }

    /** An answer other than success, gone or a budget's 429. */
    boolean apiError() {
        return stuck.stream().anyMatch(s -> s.cause() == Cause.API_ERROR);
    }

    private static String failure(Pod pod, Answer answer, DrainOptions options) {
        String action = Boolean.TRUE.equals(options.getDisableEviction()) ? "deleting (disableEviction bypasses PodDisruptionBudgets)" : "evicting";
        return BlockedByReport.tail(action + " " + NodeDrainer.refOf(pod).ref() + ": " + answer.describe());
    }
}
