package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.EscalationStep.Action;

/**
 * The escalation ladder of a blocked drain (spec.drain.escalation): which of its steps are due, decided
 * from the drain's own data — how long it has been blocked, by which budgets, holding which pods — and
 * recorded, with the time, in the drain's state so each step is taken once per cause and a restart takes
 * none twice. Pure: what to warn about, which pods to delete and whether to give the node up come out;
 * the caller does them.
 *
 * <p>Without a ladder the drain climbs the default one: a Warning after it has been blocked for
 * {@link #DEFAULT_WARN_AFTER}. Nothing is ever deleted unless a DeletePods step's selector matches the pod.
 */
public final class DrainEscalation {
    public static final Duration DEFAULT_WARN_AFTER = Duration.ofSeconds(10);
    /** How many steps a node's drain keeps in its status; the oldest go first. */
    static final int MAX_RECORDS = 20;

    /** A pod a budget keeps on the node, with what a step's selector matches on. */
    public record HeldPod(EvictionApi.PodRef pod, Map<String, String> labels, String budget) {
    }

    /** A pod the ladder deletes, with the step's grace period (null: the pod's own). */
    public record Deletion(EvictionApi.PodRef pod, Integer gracePeriodSeconds) {
    }

    /**
     * What the due steps come to.
     *
     * @param warnings the text of a Warning event per Warn step taken now
     * @param deletions the pods of the DeletePods steps taken now
     * @param giveUp SkipNode, Fail or RollBack when a give-up step was taken now
     * @param why for a give-up: a sentence naming the step, the budgets and the pods
     */
    public record Decision(List<String> warnings, List<Deletion> deletions, Optional<Action> giveUp, String why) {
        static final Decision NONE = new Decision(List.of(), List.of(), Optional.empty(), "");
    }

    private DrainEscalation() {
    }

    /** The CR's ladder, or the default one; in the order the steps come due. */
    public static List<EscalationStep> ladder(DrainOptions options) {
        List<EscalationStep> steps = options.getEscalation() == null || options.getEscalation().isEmpty()
                ? List.of(step((int) DEFAULT_WARN_AFTER.toSeconds(), Action.Warn))
                : options.getEscalation();
        return steps.stream().sorted(Comparator.comparing(EscalationStep::getAfterSeconds)).toList();
    }

    /**
     * The steps due after the drain has been blocked this long by this cause, not yet taken for it.
     *
     * @param cause the budgets holding the drain (sorted namespace/name), what stays the same while it is blocked
     * @param holds the budgets with their numbers and pods, as users read them
     */
    public static Decision decide(List<EscalationStep> ladder, DrainState state, String node, String cause, String holds, List<HeldPod> held,
            Duration blockedFor, Instant now) {
        List<String> warnings = new ArrayList<>();
        List<Deletion> deletions = new ArrayList<>();
        for (int i = 0; i < ladder.size(); i++) {
            EscalationStep step = ladder.get(i);
            if (blockedFor.getSeconds() < step.getAfterSeconds()) {
                break;
            }
            List<HeldPod> matching = held.stream().filter(p -> selects(step, p)).toList();
            // A step with a selector is for the pods it matches: it waits until the budgets hold one of them.
            if (alreadyTaken(state, i + 1, cause) || step.getSelector() != null && matching.isEmpty()) {
                continue;
            }
            String pods = matching.stream().map(p -> p.pod().ref()).collect(Collectors.joining(", "));
            String after = "after the drain of node " + node + " was blocked for " + blockedFor.toSeconds() + "s";
            switch (step.getAction()) {
                case Warn -> {
                    record(state, i + 1, step.getAction(), cause, pods, now, "warned");
                    warnings.add("The drain of node " + node + " is blocked: no pod has left it for " + blockedFor.toSeconds() + "s because "
                            + holds + ". It carries on as soon as the budget allows another disruption.");
                }
                case DeletePods -> {
                    record(state, i + 1, step.getAction(), cause, pods, now, null);
                    matching.forEach(p -> deletions.add(new Deletion(p.pod(), step.getGracePeriodSeconds())));
                }
                case SkipNode, Fail, RollBack -> {
                    record(state, i + 1, step.getAction(), cause, pods, now, "gave the node up");
                    return new Decision(warnings, deletions, Optional.of(step.getAction()), "spec.drain.escalation step " + (i + 1) + " ("
                            + step.getAction() + " " + after + ", held by " + holds + ")");
                }
            }
        }
        return warnings.isEmpty() && deletions.isEmpty() ? Decision.NONE : new Decision(warnings, deletions, Optional.empty(), "");
    }

    /**
     * The drain gave up by itself (its attempts or the deadline ran out): the ladder's give-up step, when
     * one applies to the pods held, says what that means; empty leaves it to the operation's default.
     */
    public static Optional<EscalationStep> onGivingUp(List<EscalationStep> ladder, List<HeldPod> held) {
        return ladder.stream().filter(s -> s.getAction() == Action.SkipNode || s.getAction() == Action.Fail || s.getAction() == Action.RollBack)
                .filter(s -> held.stream().anyMatch(p -> selects(s, p)))
                .findFirst();
    }

    /** What DELETE answered for each pod of the last DeletePods step, written into its record. */
    public static String recordDeletions(DrainState state, Map<EvictionApi.PodRef, EvictionApi.Answer> answers) {
        String outcome = answers.entrySet().stream().map(e -> e.getKey().ref() + ": " + (e.getValue().accepted() ? "deleted"
                : e.getValue().gone() ? "already gone" : e.getValue().describe())).collect(Collectors.joining("; "));
        state.getEscalation().stream().filter(r -> r.getAction() == Action.DeletePods && r.getResult() == null)
                .forEach(r -> r.setResult(BlockedByReport.tail(outcome)));
        return outcome;
    }

    /** A step without a selector is for every held pod. */
    private static boolean selects(EscalationStep step, HeldPod pod) {
        return step.getSelector() == null || PodSelector.of(step.getSelector()).matches(pod.labels());
    }

    private static boolean alreadyTaken(DrainState state, int step, String cause) {
        return state.getEscalation().stream().anyMatch(r -> r.getStep() == step && cause.equals(r.getCause()));
    }

    private static void record(DrainState state, int step, Action action, String cause, String pods, Instant now, String result) {
        EscalationRecord record = new EscalationRecord();
        record.setStep(step);
        record.setAction(action);
        record.setAt(Timestamps.format(now));
        record.setCause(cause);
        record.setPods(BlockedByReport.tail(pods));
        record.setResult(result);
        List<EscalationRecord> records = state.getEscalation();
        records.add(record);
        if (records.size() > MAX_RECORDS) {
            records.subList(0, records.size() - MAX_RECORDS).clear();
        }
    }

    private static EscalationStep step(int afterSeconds, Action action) {
        EscalationStep step = new EscalationStep();
        step.setAfterSeconds(afterSeconds);
        step.setAction(action);
        return step;
    }
}
