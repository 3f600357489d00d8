package dev.cks.nodeops.drain;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Stream;

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import dev.cks.nodeops.drain.BlockedByReport.Cause;
import dev.cks.nodeops.drain.BlockedByReport.StuckPod;
import dev.cks.nodeops.drain.DrainResult.PodsLeft;
import dev.cks.nodeops.drain.EvictionApi.Answer;
import dev.cks.nodeops.drain.EvictionApi.PodRef;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Drains one node in short, resumable steps: each step lists the node's pods, evicts those that are
 * due, and returns when the next step is due. It never waits for pods to go away; the caller requeues.
 * Everything it needs to carry on lives in the {@link DrainState} it returns, so a new instance (after
 * an operator restart) continues where the last one stopped.
 */
public final class NodeDrainer {
    /** How soon an eviction that failed with an API error other than a budget's 429 is tried again. */
    public static final Duration RETRY_BLOCKED_EVICTION = Duration.ofSeconds(5);
    /**
     * How soon to look again when a PodDisruptionBudget held pods back (or answered 429): replacements
     * becoming Ready raise {@code disruptionsAllowed} within about a second, and a look that sends no
     * eviction costs two list calls (the node's pods, the budgets), not one request per pod.
     */
    public static final Duration RECHECK_DISRUPTION_BUDGETS = Duration.ofSeconds(1);
    /** How soon to look again while evicted pods are only terminating. */
    public static final Duration CHECK_TERMINATING = Duration.ofSeconds(1);
    /** How soon to look again while the drain only waits for pods annotated wait-completed, which may run for hours. */
    public static final Duration CHECK_COMPLETION = Duration.ofSeconds(5);
    /**
     * While watches wake the drain (a pod leaving, a budget allowing more), the look it would have taken
     * within a second waits this long instead: only in case a wake-up got lost.
     */
    public static final Duration WATCHED_FALLBACK = Duration.ofSeconds(5);
    private static final Duration STEP_BUDGET = Duration.ofSeconds(20);

    private final KubernetesClient client;
    private final EvictionApi evictions;
    private final BudgetReader budgets;
    private final EvictionListener listener;
    private final DrainWatches watches;
    private final OwnPod own;

    /** A drainer that lists on every step. */
    public NodeDrainer(KubernetesClient client) {
        this(client, EvictionListener.NONE, null);
    }

    /**
     * @param watches where steps given a wake-up read the node's pods and budgets; null: every step lists
     */
    public NodeDrainer(KubernetesClient client, EvictionListener listener, DrainWatches watches) {
        this(client, listener, watches, OwnPod.NONE);
    }

    /** @param own the operator's own pod, evicted from its node last ({@link OwnPod}) */
    public NodeDrainer(KubernetesClient client, EvictionListener listener, DrainWatches watches, OwnPod own) {
        this.client = client;
        this.own = own;
        this.evictions = new EvictionApi(client);
        this.budgets = new BudgetReader(client);
        this.listener = listener;
        this.watches = watches;
    }

    /** One bounded step of draining the node, reading the API server (see {@link #step(String, DrainOptions, DrainState, Instant, Instant, Runnable)}). */
    public DrainResult step(String node, DrainOptions options, DrainState state, Instant deadline, Instant now) {
        return step(node, options, state, deadline, now, null);
    }

    /**
     * One bounded step of draining the node. With a wake-up (and the drainer's {@link DrainWatches}) the
     * step reads the node's pods and budgets from watches, which call {@code wake} when a pod leaves the
     * node or a budget allows more disruptions; it looks again on its own only after {@link #WATCHED_FALLBACK}.
     * A drain is declared done only after a list of the node's pods confirms it. The watches stop when the
     * drain ends; a watch that cannot start or has stopped watching makes the step list, as without one.
     *
     * @param state from the last step (or a new one); not modified, the result carries the next state
     * @param deadline the operation's deadline, or null
     * @param wake null: read the API server on every step
     */
    public DrainResult step(String node, DrainOptions options, DrainState state, Instant deadline, Instant now, Runnable wake) {
        DrainResult result = stepOnce(node, options, state, deadline, now, wake);
        if (result.finished() && watches != null) {
            watches.stop(node);
        }
        return result;
    }

    private DrainResult stepOnce(String node, DrainOptions options, DrainState state, Instant deadline, Instant now, Runnable wake) {
        DrainState next = DrainState.copyOf(state);
        PodFilters filters;
        try {
            filters = PodFilters.forOptions(options, now);
        } catch (PodSelector.InvalidSelector invalidSelector) {
            return ended(DrainResult.failed(next, invalidSelector.getMessage(), 0));
        }
        DrainSchedule.Decision decision = DrainSchedule.decide(options, next, deadline, now);
        decision.applyTo(next);
        if (decision.kind() == DrainSchedule.Kind.WAIT) {
            return DrainResult.inProgress(next, Objects.requireNonNullElse(next.getBlockedBy(), ""), decision.nextAttemptAt(), PodsLeft.UNSEEN);
        }
        Scope scope = new Scope(node, options, decision, watchOf(node, wake, now, next), next, now);
        Sorted sorted;
        try {
            sorted = readPods(scope, filters);
        } catch (KubernetesClientException e) {
            return podsUnreadable(scope, e);
        }
        if (!sorted.refused().isEmpty()) {
            // kubectl refuses the whole drain before evicting anything: a half-drained node helps nobody.
            return ended(DrainResult.failed(next, BlockedByReport.format(node, sorted.refused(), Map.of(), null), sorted.refused().size()));
        }
        if (sorted.nothingLeft()) {
            return done(next);
        }
        return evictDue(scope, sorted);
    }

    /**
     * What one step works with once the schedule let it run.
     *
     * @param watch the node's watches the step reads; null: the step lists
     * @param state the state the step builds for the next one
     */
    private record Scope(String node, DrainOptions options, DrainSchedule.Decision decision, DrainWatches.NodeWatch watch, DrainState state,
            Instant now) {
        /** Out of attempts or time: dry runs tell why each pod is still there, and nothing more is evicted. */
        boolean givingUp() {
            return decision.kind() == DrainSchedule.Kind.GIVE_UP;
        }

        /**
         * A watch may still show a pod this drain evicted without its deletion timestamp: it is leaving all the
         * same (the server accepted its eviction; the same uid is the same pod), and is not sent again.
         */
        Predicate<PodRef> evictedEarlier() {
            return watch == null ? pod -> false : state::evictedEarlier;
        }
    }

    /** The node's pods the drain acts on, sorted by what it does with them. */
    private record Sorted(List<Pod> toRemove, List<Pod> awaited, List<StuckPod> refused) {
        static Sorted of(List<Pod> pods, PodFilters filters) {
            Sorted sorted = new Sorted(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (Pod pod : pods) {
                PodVerdict verdict = filters.verdict(pod);
                switch (verdict.action()) {
                    case EVICT -> sorted.toRemove.add(pod);
                    case REFUSE -> sorted.refused.add(StuckPod.of(pod, Cause.REFUSED, verdict.reason()));
                    case WAIT -> sorted.awaited.add(pod);
                    case SKIP -> { }
                }
            }
            return sorted;
        }

        boolean nothingLeft() {
            return refused.isEmpty() && toRemove.isEmpty() && awaited.isEmpty();
        }
    }

    /**
     * The pods to remove by what this step does with them: evict those due, wait for those leaving and keep the others
     * for later; the operator's own pod ({@code last}) goes when nothing else is left.
     */
    private record Turn(List<Pod> leaving, List<Pod> due, List<Pod> later, List<Pod> last, int order) {
        static Turn of(List<Pod> toRemove, int awaited, Predicate<PodRef> evictedEarlier, OwnPod own) {
            List<Pod> leaving = toRemove.stream().filter(p -> NodeDrainer.leaving(p, evictedEarlier)).toList();
            List<Pod> staying = toRemove.stream().filter(p -> !NodeDrainer.leaving(p, evictedEarlier)).toList();
            List<Pod> last = own.heldBack(staying, leaving.size() + awaited);
            List<Pod> rest = toRemove.stream().filter(p -> !last.contains(p)).toList();
            // Pods of a higher drain-order wait until every pod of a lower order is gone.
            int order = PodDrainPolicy.current(rest);
            List<Pod> going = staying.stream().filter(p -> !last.contains(p)).toList();
            return new Turn(leaving, going.stream().filter(p -> PodDrainPolicy.order(p) == order).toList(),
                    going.stream().filter(p -> PodDrainPolicy.order(p) != order).toList(), last, order);
        }

        /** The pods this step waits for without sending anything: leaving, of a later order, or awaited to complete. */
        List<StuckPod> waiting(List<Pod> awaited, Instant now) {
            List<StuckPod> stuck = new ArrayList<>();
            leaving.forEach(pod -> stuck.add(StuckPod.of(pod, Cause.TERMINATING, terminatingDetail(pod, now))));
            later.forEach(pod -> stuck.add(StuckPod.of(pod, Cause.LATER_ORDER,
                    PodDrainPolicy.ORDER + " " + PodDrainPolicy.order(pod) + ", after the pods of order " + order)));
            awaited.forEach(pod -> stuck.add(StuckPod.of(pod, Cause.AWAITING_COMPLETION, "")));
            last.forEach(pod -> stuck.add(StuckPod.of(pod, Cause.LATER_ORDER, "the operator's own pod, evicted last")));
            return stuck;
        }
    }

    /**
     * The evictions a step sends.
     *
     * @param heldBack pods not sent because a budget allows no disruption now, with that budget's namespace/name
     * @param budgetsRead the budgets read before sending, per namespace; empty when none were
     */
    private record Round(List<Pod> send, Map<Pod, String> heldBack, Map<String, List<PodDisruptionBudget>> budgetsRead) {
    }

    private Sorted readPods(Scope scope, PodFilters filters) {
        List<Pod> pods = scope.watch() != null ? scope.watch().pods() : listPods(scope.node());
        Sorted sorted = Sorted.of(pods, filters);
        if (scope.watch() != null && sorted.nothingLeft()) {
            // "Drained" is the API server's word, not a watch's that may lag behind it.
            pods = listPods(scope.node());
            sorted = Sorted.of(pods, filters);
        }
        scope.state().forgetGone(pods.stream().map(NodeDrainer::refOf).toList());
        return sorted;
    }

    private static DrainResult podsUnreadable(Scope scope, KubernetesClientException e) {
        DrainState next = scope.state();
        next.setLastApiError(BlockedByReport.tail("listing the pods of node " + scope.node() + ": " + e.getMessage()));
        String report = BlockedByReport.format(scope.node(), List.of(), Map.of(), next.getLastApiError());
        return scope.givingUp() ? ended(DrainResult.gaveUp(next, report + "\n" + scope.decision().why(), PodsLeft.UNSEEN))
                : inProgress(scope, report, scope.now().plus(RETRY_BLOCKED_EVICTION), PodsLeft.UNSEEN);
    }

    /** Sends the evictions due (as many as the budgets allow) and reports what still keeps pods on the node. */
    private DrainResult evictDue(Scope scope, Sorted sorted) {
        Turn turn = Turn.of(sorted.toRemove(), sorted.awaited().size(), scope.evictedEarlier(), own);
        Round round = round(scope, turn.due());
        Map<Pod, Answer> answers = removeAll(round.send(), scope.options(), scope.givingUp());
        EvictionOutcome outcome = EvictionOutcome.of(answers, scope.givingUp(), scope.options());
        record(scope, round, answers, outcome);

        List<StuckPod> stuck = new ArrayList<>(turn.waiting(sorted.awaited(), scope.now()));
        stuck.addAll(outcome.stuck());
        round.heldBack().forEach((pod, budget) -> stuck.add(StuckPod.of(pod, Cause.DISRUPTION_BUDGET, budget)));
        Map<String, List<Pod>> blockedByNamespace = byNamespace(
                Stream.concat(outcome.refusedByBudget().stream(), round.heldBack().keySet().stream()));
        Map<String, BudgetNumbers> budgetNumbers = budgetsFor(blockedByNamespace, stuck, scope.state(), round.budgetsRead(), outcome.evicted());
        String report = BlockedByReport.format(scope.node(), stuck, budgetNumbers, scope.givingUp() ? scope.state().getLastApiError() : null);

        int remaining = sorted.toRemove().size() - outcome.gone() + sorted.awaited().size();
        if (remaining == 0) {
            return done(scope.state());
        }
        List<DrainEscalation.HeldPod> held = heldPods(stuck, sorted.toRemove());
        if (scope.givingUp()) {
            return ended(DrainResult.gaveUp(scope.state(), report + "\nThe drain gives up: " + scope.decision().why() + ".",
                    new PodsLeft(remaining, List.of(), false, held)));
        }
        scope.state().setBlockedBy(report);
        boolean podsLeaving = !outcome.evicted().isEmpty() || !turn.leaving().isEmpty() || outcome.gone() > 0;
        List<BudgetNumbers> holding = round.heldBack().values().stream().distinct().map(budgetNumbers::get).toList();
        boolean onlyAwaiting = sorted.toRemove().size() == outcome.gone();
        return inProgress(scope, report, scope.now().plus(nextLook(scope, onlyAwaiting, outcome, holding, podsLeaving)),
                new PodsLeft(remaining, BlockedByReport.budgetHolds(stuck, budgetNumbers), podsLeaving, held));
    }

    /**
     * As {@link EvictionRound#nextLook}, but a drain that only awaits pods completing their work looks less often,
     * and one its watches wake looks on its own only after {@link #WATCHED_FALLBACK}.
     *
     * @param holding the numbers of the budgets that held pods back (an element is null when unknown)
     */
    private static Duration nextLook(Scope scope, boolean onlyAwaiting, EvictionOutcome outcome, List<BudgetNumbers> holding, boolean podsLeaving) {
        Duration again = onlyAwaiting && !outcome.apiError() ? CHECK_COMPLETION
                : EvictionRound.nextLook(outcome.apiError(), outcome.refusedWith429(), holding, podsLeaving);
        if (scope.watch() != null && again.compareTo(WATCHED_FALLBACK) < 0) {
            // What the drain waits for (a pod leaving, a budget allowing more) wakes it.
            again = WATCHED_FALLBACK;
        }
        return again;
    }

    private static Map<String, List<Pod>> byNamespace(Stream<Pod> pods) {
        Map<String, List<Pod>> byNamespace = new LinkedHashMap<>();
        pods.forEach(pod -> byNamespace.computeIfAbsent(pod.getMetadata().getNamespace(), n -> new ArrayList<>()).add(pod));
        return byNamespace;
    }

    /**
     * Budget-aware: sends only the evictions the budgets allow now, so pods that could not go anyway cost no
     * 429. Not when giving up (a dry run of every pod tells why each is still there, without evicting anything
     * more), nor for plain deletes (they bypass budgets).
     */
    private Round round(Scope scope, List<Pod> due) {
        if (scope.givingUp() || Boolean.TRUE.equals(scope.options().getDisableEviction()) || due.isEmpty()) {
            return new Round(due, Map.of(), Map.of());
        }
        Map<String, List<PodDisruptionBudget>> read = budgets.ofPods(due, scope.watch(), scope.state(), scope.now());
        if (read == null) {
            // Budgets unreadable: send everything, the API server decides as it always does.
            return new Round(due, Map.of(), Map.of());
        }
        EvictionRound.Plan plan = EvictionRound.plan(due, read.values().stream().flatMap(List::stream).toList());
        return new Round(plan.evictNow(), plan.heldBack(), read);
    }

    /** Tells the listener what each request got, keeps what was evicted in the state, and tells the watches. */
    private void record(Scope scope, Round round, Map<Pod, Answer> answers, EvictionOutcome outcome) {
        if (!scope.givingUp()) {
            answers.values().forEach(answer -> listener.answered(EvictionOutcome.Answered.of(answer).label));
        }
        for (Pod pod : outcome.evicted()) {
            scope.state().recordEvicted(refOf(pod));
            scope.state().recordWorkload(workloadOf(pod));
        }
        if (outcome.lastApiError() != null) {
            scope.state().setLastApiError(outcome.lastApiError());
        }
        if (scope.watch() != null) {
            scope.watch().spent(outcome.evicted(), round.budgetsRead(), scope.now());
        }
    }

    private List<Pod> listPods(String node) {
        return client.pods().inAnyNamespace().withField("spec.nodeName", node).list().getItems();
    }

    /** The node's watches when this step may read them: a wake-up given, started, and still watching; else null (the step lists). */
    private DrainWatches.NodeWatch watchOf(String node, Runnable wake, Instant now, DrainState next) {
        if (watches == null || wake == null) {
            return null;
        }
        try {
            DrainWatches.NodeWatch watch = watches.of(node, wake, now);
            return watch.watching() ? watch : null;
        } catch (KubernetesClientException e) {
            next.setLastApiError(BlockedByReport.tail(e.getMessage()));
            return null;
        }
    }

    /** The pods budgets keep on the node (held back, or refused with 429), with their labels for the ladder's selectors. */
    private static List<DrainEscalation.HeldPod> heldPods(List<StuckPod> stuck, List<Pod> pods) {
        Map<String, Pod> byRef = new HashMap<>();
        pods.forEach(p -> byRef.put(PodFilters.name(p), p));
        return stuck.stream().filter(s -> s.cause() == Cause.DISRUPTION_BUDGET && byRef.containsKey(s.ref()))
                .map(s -> new DrainEscalation.HeldPod(refOf(byRef.get(s.ref())), byRef.get(s.ref()).getMetadata().getLabels(), s.detail()))
                .toList();
    }

    private Map<Pod, Answer> removeAll(List<Pod> pods, DrainOptions options, boolean dryRun) {
        boolean disableEviction = Boolean.TRUE.equals(options.getDisableEviction());
        return EvictionApi.each(pods, pod -> evictions.remove(refOf(pod), options.getGracePeriodSeconds(), dryRun, disableEviction), STEP_BUDGET);
    }

    /**
     * The numbers of the budgets of namespaces with blocked pods, for the report. Namespaces read at the
     * start of this step are not read again: their {@code disruptionsAllowed} is lowered by the evictions
     * this step got accepted, as the API server lowers it on each one. Others (a 429 after the budgets could
     * not be read, or a dry run when giving up) are listed now.
     */
    private Map<String, BudgetNumbers> budgetsFor(Map<String, List<Pod>> blockedByNamespace, List<StuckPod> stuck, DrainState next,
            Map<String, List<PodDisruptionBudget>> readBefore, List<Pod> evicted) {
        Map<String, BudgetNumbers> numbers = new HashMap<>();
        Map<String, String> budgetOfPod = new HashMap<>();
        blockedByNamespace.forEach((namespace, pods) -> {
            boolean read = readBefore.containsKey(namespace);
            List<PodDisruptionBudget> ofNamespace = read ? readBefore.get(namespace) : budgets.ofNamespace(namespace, next);
            if (ofNamespace == null) {
                return;
            }
            for (PodDisruptionBudget budget : ofNamespace) {
                BudgetNumbers after = DisruptionBudgets.numbersAfter(budget, read ? evicted : List.of());
                numbers.put(after.ref(), after);
            }
            for (Pod pod : pods) {
                List<PodDisruptionBudget> covering = DisruptionBudgets.covering(pod, ofNamespace);
                if (covering.size() == 1) {
                    budgetOfPod.put(refOf(pod).ref(), namespace + "/" + covering.get(0).getMetadata().getName());
                }
            }
        });
        // A 429 whose message named no budget ("still being processed" names it; a stale cache may not): match by selector.
        stuck.replaceAll(p -> p.cause() == Cause.DISRUPTION_BUDGET && !numbers.containsKey(p.detail()) && budgetOfPod.containsKey(p.ref())
                ? new StuckPod(p.namespace(), p.name(), p.cause(), budgetOfPod.get(p.ref())) : p);
        return numbers;
    }

    private static boolean leaving(Pod pod, Predicate<PodRef> evictedEarlier) {
        return pod.getMetadata().getDeletionTimestamp() != null || evictedEarlier.test(refOf(pod));
    }

    private static String terminatingDetail(Pod pod, Instant now) {
        if (pod.getMetadata().getDeletionTimestamp() == null) {
            return "evicted";
        }
        Instant deleted = Timestamps.parse(pod.getMetadata().getDeletionTimestamp());
        long seconds = deleted == null ? 0 : Math.max(0, Duration.between(deleted, now).getSeconds());
        List<String> finalizers = pod.getMetadata().getFinalizers();
        Set<String> holding = finalizers == null ? Set.of() : new TreeSet<>(finalizers);
        return "deleted " + seconds + "s ago" + (holding.isEmpty() ? "" : ", finalizers " + String.join(", ", holding));
    }

    private static DrainResult done(DrainState state) {
        // Nothing is evicted again: what the next steps of the node read is the workloads.
        state.keepFor(DrainState.ReadBack.WORKLOADS);
        state.setNextAttemptAt(null);
        state.setBlockedBy(null);
        return DrainResult.done(state);
    }

    /** A drain that ended undone (failed or given up): no attempt follows, and its report stays in the state for users. */
    private static DrainResult ended(DrainResult result) {
        result.state().setNextAttemptAt(null);
        result.state().setBlockedBy(result.report());
        return result;
    }

    /** Looks again when wanted, but no later than the end of the attempt (the next step gives up or starts the next). */
    private static DrainResult inProgress(Scope scope, String report, Instant wanted, PodsLeft left) {
        Instant attemptEndsAt = scope.decision().attemptEndsAt();
        Instant nextCheck = attemptEndsAt != null && attemptEndsAt.isBefore(wanted) ? attemptEndsAt : wanted;
        return DrainResult.inProgress(scope.state(), report, nextCheck, left);
    }

    /**
     * Deletes pods (a plain DELETE with their UID as precondition, bypassing their budgets): the escalation
     * ladder's DeletePods step, which a user opted these pods into. Answers per pod, never throws.
     */
    public Map<EvictionApi.PodRef, Answer> delete(List<DrainEscalation.Deletion> deletions) {
        Map<EvictionApi.PodRef, Answer> answers = new LinkedHashMap<>();
        EvictionApi.each(deletions, d -> evictions.remove(d.pod(), d.gracePeriodSeconds(), false, true), STEP_BUDGET)
                .forEach((deletion, answer) -> answers.put(deletion.pod(), answer));
        return answers;
    }

    /** {@code Kind namespace/name} of the pod's controller; null for a pod no controller manages. */
    static String workloadOf(Pod pod) {
        var controller = PodFilters.controllerOf(pod);
        return controller == null ? null : controller.getKind() + " " + pod.getMetadata().getNamespace() + "/" + controller.getName();
    }

    static PodRef refOf(Pod pod) {
        return new PodRef(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid());
    }
}
