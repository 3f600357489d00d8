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

import dev.cks.nodeops.common.Timestamps;
import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import dev.cks.nodeops.drain.BlockedByReport.Cause;
import dev.cks.nodeops.drain.BlockedByReport.StuckPod;
import dev.cks.nodeops.drain.DrainResult.Outcome;
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
    /**
     * Up to this many namespaces, budgets are listed namespace by namespace (each answer holds only
     * budgets that can matter); beyond it one cluster-wide list is fewer requests.
     */
    static final int MAX_NAMESPACES_LISTED_ONE_BY_ONE = 3;
    private static final Duration STEP_BUDGET = Duration.ofSeconds(20);

    private final KubernetesClient client;
    private final EvictionApi evictions;
    private final EvictionListener listener;
    private final DrainWatches watches;

    /** A drainer that lists on every step. */
    public NodeDrainer(KubernetesClient client) {
        this(client, EvictionListener.NONE, null);
    }

    /**
     * @param watches where steps given a wake-up read the node's pods and budgets; null: every step lists
     */
    public NodeDrainer(KubernetesClient client, EvictionListener listener, DrainWatches watches) {
        this.client = client;
        this.evictions = new EvictionApi(client);
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
            return finish(Outcome.FAILED, next, invalidSelector.getMessage(), 0);
        }
        DrainSchedule.Decision decision = DrainSchedule.decide(options, next, deadline, now);
        decision.applyTo(next);
        if (decision.kind() == DrainSchedule.Kind.WAIT) {
            return new DrainResult(Outcome.IN_PROGRESS, decision.nextAttemptAt(), Objects.requireNonNullElse(next.getBlockedBy(), ""), next, -1,
                    List.of(), false, List.of());
        }
        boolean givingUp = decision.kind() == DrainSchedule.Kind.GIVE_UP;
        DrainWatches.NodeWatch watch = watchOf(node, wake, now, next);

        Sorted sorted;
        try {
            sorted = Sorted.of(watch != null ? watch.pods() : listPods(node), filters);
            if (watch != null && sorted.nothingLeft()) {
                // "Drained" is the API server's word, not a watch's that may lag behind it.
                sorted = Sorted.of(listPods(node), filters);
            }
        } catch (KubernetesClientException e) {
            next.setLastApiError(BlockedByReport.tail("listing the pods of node " + node + ": " + e.getMessage()));
            String report = BlockedByReport.format(node, List.of(), Map.of(), next.getLastApiError());
            return givingUp ? finish(Outcome.BLOCKED, next, report + "\n" + decision.why(), -1)
                    : inProgress(next, report, -1, List.of(), false, now.plus(RETRY_BLOCKED_EVICTION), decision.attemptEndsAt(), List.of());
        }
        List<Pod> toRemove = sorted.toRemove();
        List<Pod> awaited = sorted.awaited();
        if (!sorted.refused().isEmpty()) {
            // kubectl refuses the whole drain before evicting anything: a half-drained node helps nobody.
            return finish(Outcome.FAILED, next, BlockedByReport.format(node, sorted.refused(), Map.of(), null), sorted.refused().size());
        }
        if (sorted.nothingLeft()) {
            next.setBlockedBy(null);
            return finish(Outcome.DONE, next, "", 0);
        }

        // A watch may still show a pod this drain evicted without its deletion timestamp: it is leaving all the
        // same (the server accepted its eviction; the same uid is the same pod), and is not sent again.
        Set<String> evictedEarlier = watch == null ? Set.of() : Set.copyOf(next.getPodsSeen());
        List<Pod> terminating = toRemove.stream().filter(p -> leaving(p, evictedEarlier)).toList();
        // Pods of a higher drain-order wait until every pod of a lower order is gone.
        int order = PodDrainPolicy.current(toRemove);
        List<Pod> due = toRemove.stream().filter(p -> !leaving(p, evictedEarlier) && PodDrainPolicy.order(p) == order).toList();
        List<Pod> later = toRemove.stream().filter(p -> !leaving(p, evictedEarlier) && PodDrainPolicy.order(p) != order).toList();
        // Budget-aware: send only the evictions the budgets allow now, so pods that could not go anyway
        // cost no 429. Not when giving up (a dry run of every pod tells why each is still there, without
        // evicting anything more), nor for plain deletes (they bypass budgets).
        Map<String, List<PodDisruptionBudget>> budgetsListed = Map.of();
        List<Pod> send = due;
        Map<Pod, String> heldBack = Map.of();
        if (!givingUp && !Boolean.TRUE.equals(options.getDisableEviction()) && !due.isEmpty()) {
            Map<String, List<PodDisruptionBudget>> listed = watch != null ? watchedBudgets(watch, due, next, now) : null;
            listed = listed != null ? listed : listBudgets(due, next);
            if (listed != null) {
                budgetsListed = listed;
                EvictionRound.Plan plan = EvictionRound.plan(due, listed.values().stream().flatMap(List::stream).toList());
                send = plan.evictNow();
                heldBack = plan.heldBack();
            }
            // Budgets unreadable: send everything, the API server decides as it always does.
        }
        Map<Pod, Answer> answers = removeAll(send, options, givingUp);

        List<StuckPod> stuck = new ArrayList<>();
        Map<String, List<Pod>> blockedByNamespace = new LinkedHashMap<>();
        List<Pod> evicted = new ArrayList<>();
        boolean refusedWith429 = false;
        boolean apiError = false;
        int gone = 0;
        for (Pod pod : terminating) {
            stuck.add(new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), Cause.TERMINATING, terminatingDetail(pod, now)));
        }
        for (Pod pod : later) {
            stuck.add(new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), Cause.LATER_ORDER,
                    PodDrainPolicy.ORDER + " " + PodDrainPolicy.order(pod) + ", after the pods of order " + order));
        }
        for (Pod pod : awaited) {
            stuck.add(new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), Cause.AWAITING_COMPLETION, ""));
        }
        for (Map.Entry<Pod, Answer> entry : answers.entrySet()) {
            Pod pod = entry.getKey();
            Answer answer = entry.getValue();
            String namespace = pod.getMetadata().getNamespace();
            if (!givingUp) {
                listener.answered(answer.gone() ? "gone" : answer.accepted() ? "evicted" : answer.tooManyRequests() ? "blocked" : "error");
            }
            if (answer.gone()) {
                gone++;
            } else if (answer.accepted()) {
                if (givingUp) {
                    // The dry run would have been allowed: the attempt ran out just before this pod's turn.
                    stuck.add(new StuckPod(namespace, pod.getMetadata().getName(), Cause.NOT_EVICTED_IN_TIME, ""));
                } else {
                    next.recordEvicted(refOf(pod).key());
                    next.recordWorkload(workloadOf(pod));
                    evicted.add(pod);
                    stuck.add(new StuckPod(namespace, pod.getMetadata().getName(), Cause.TERMINATING, "evicted just now"));
                }
            } else if (answer.tooManyRequests()) {
                refusedWith429 = true;
                blockedByNamespace.computeIfAbsent(namespace, n -> new ArrayList<>()).add(pod);
                stuck.add(new StuckPod(namespace, pod.getMetadata().getName(), Cause.DISRUPTION_BUDGET,
                        DisruptionBudgets.namedIn(answer.causes()).map(name -> namespace + "/" + name).orElse(answer.message())));
                next.setLastApiError(BlockedByReport.tail(action(options) + " " + refOf(pod).ref() + ": " + answer.describe()));
            } else {
                apiError = true;
                stuck.add(new StuckPod(namespace, pod.getMetadata().getName(), Cause.API_ERROR, answer.describe()));
                next.setLastApiError(BlockedByReport.tail(action(options) + " " + refOf(pod).ref() + ": " + answer.describe()));
            }
        }
        for (Map.Entry<Pod, String> held : heldBack.entrySet()) {
            Pod pod = held.getKey();
            blockedByNamespace.computeIfAbsent(pod.getMetadata().getNamespace(), n -> new ArrayList<>()).add(pod);
            stuck.add(new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), Cause.DISRUPTION_BUDGET, held.getValue()));
        }
        if (watch != null) {
            watch.spent(evicted, budgetsListed, now);
        }
        Map<String, BudgetNumbers> budgets = budgetsFor(blockedByNamespace, stuck, next, budgetsListed, evicted);
        String report = BlockedByReport.format(node, stuck, budgets, givingUp ? next.getLastApiError() : null);
        int remaining = toRemove.size() - gone + awaited.size();
        if (remaining == 0) {
            next.setBlockedBy(null);
            return finish(Outcome.DONE, next, "", 0);
        }
        next.setBlockedBy(report);
        List<DrainEscalation.HeldPod> held = heldPods(stuck, toRemove);
        if (givingUp) {
            String gaveUp = report + "\nThe drain gives up: " + decision.why() + ".";
            next.setBlockedBy(gaveUp);
            next.setNextAttemptAt(null);
            return new DrainResult(Outcome.BLOCKED, null, gaveUp, next, remaining, List.of(), false, held);
        }
        List<BudgetNumbers> holding = heldBack.values().stream().distinct()
                .map(budgets::get).toList();
        boolean podsLeaving = !evicted.isEmpty() || !terminating.isEmpty() || gone > 0;
        boolean onlyAwaiting = toRemove.size() == gone;
        Duration again = onlyAwaiting && !apiError ? CHECK_COMPLETION : EvictionRound.nextLook(apiError, refusedWith429, holding, podsLeaving);
        if (watch != null && again.compareTo(WATCHED_FALLBACK) < 0) {
            // What the drain waits for (a pod leaving, a budget allowing more) wakes it.
            again = WATCHED_FALLBACK;
        }
        return inProgress(next, report, remaining, BlockedByReport.budgetHolds(stuck, budgets), podsLeaving, now.plus(again),
                decision.attemptEndsAt(), held);
    }

    /** The node's pods the drain acts on, sorted by what it does with them. */
    private record Sorted(List<Pod> toRemove, List<Pod> awaited, List<StuckPod> refused) {
        static Sorted of(List<Pod> pods, PodFilters filters) {
            Sorted sorted = new Sorted(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
            for (Pod pod : pods) {
                PodVerdict verdict = filters.verdict(pod);
                switch (verdict.action()) {
                    case EVICT -> sorted.toRemove.add(pod);
                    case REFUSE -> sorted.refused.add(new StuckPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), Cause.REFUSED,
                            verdict.reason()));
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

    /** The budgets of the pods' namespaces from the watches; null when a watch of a new namespace could not start. */
    private static Map<String, List<PodDisruptionBudget>> watchedBudgets(DrainWatches.NodeWatch watch, List<Pod> due, DrainState next, Instant now) {
        Set<String> namespaces = new TreeSet<>();
        due.forEach(p -> namespaces.add(p.getMetadata().getNamespace()));
        try {
            return watch.budgets(namespaces, now);
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
     * The budgets of the namespaces of the pods due: one list per namespace, or one cluster-wide list when
     * the pods span more than {@value #MAX_NAMESPACES_LISTED_ONE_BY_ONE} namespaces. Null when a list failed.
     */
    private Map<String, List<PodDisruptionBudget>> listBudgets(List<Pod> due, DrainState next) {
        Set<String> namespaces = new TreeSet<>();
        due.forEach(p -> namespaces.add(p.getMetadata().getNamespace()));
        Map<String, List<PodDisruptionBudget>> byNamespace = new LinkedHashMap<>();
        namespaces.forEach(n -> byNamespace.put(n, new ArrayList<>()));
        try {
            if (namespaces.size() > MAX_NAMESPACES_LISTED_ONE_BY_ONE) {
                for (PodDisruptionBudget budget : client.policy().v1().podDisruptionBudget().inAnyNamespace().list().getItems()) {
                    List<PodDisruptionBudget> ofNamespace = byNamespace.get(budget.getMetadata().getNamespace());
                    if (ofNamespace != null) {
                        ofNamespace.add(budget);
                    }
                }
            } else {
                for (String namespace : namespaces) {
                    byNamespace.put(namespace, client.policy().v1().podDisruptionBudget().inNamespace(namespace).list().getItems());
                }
            }
        } catch (KubernetesClientException e) {
            next.setLastApiError(BlockedByReport.tail("listing PodDisruptionBudgets: " + e.getMessage()));
            return null;
        }
        return byNamespace;
    }

    /**
     * The numbers of the budgets of namespaces with blocked pods, for the report. Namespaces listed at the
     * start of this step are not listed again: their {@code disruptionsAllowed} is lowered by the evictions
     * this step got accepted, as the API server lowers it on each one. Others (a 429 after the budgets could
     * not be listed, or a dry run when giving up) are listed now.
     */
    private Map<String, BudgetNumbers> budgetsFor(Map<String, List<Pod>> blockedByNamespace, List<StuckPod> stuck, DrainState next,
            Map<String, List<PodDisruptionBudget>> listed, List<Pod> evicted) {
        Map<String, BudgetNumbers> numbers = new HashMap<>();
        Map<String, String> budgetOfPod = new HashMap<>();
        blockedByNamespace.forEach((namespace, pods) -> {
            List<PodDisruptionBudget> budgets = listed.containsKey(namespace) ? listed.get(namespace) : listBudgetsOf(namespace, next);
            if (budgets == null) {
                return;
            }
            for (PodDisruptionBudget budget : budgets) {
                BudgetNumbers read = DisruptionBudgets.numbers(budget);
                long evictedUnder = !listed.containsKey(namespace) ? 0 : evicted.stream()
                        .filter(p -> !EvictionRound.evictionIgnoresBudgets(p) && DisruptionBudgets.covering(p, List.of(budget)).size() == 1).count();
                numbers.put(read.ref(), new BudgetNumbers(read.namespace(), read.name(), read.desiredHealthy(), read.currentHealthy(),
                        (int) Math.max(0, read.disruptionsAllowed() - evictedUnder), read.expectedPods()));
            }
            for (Pod pod : pods) {
                List<PodDisruptionBudget> covering = DisruptionBudgets.covering(pod, budgets);
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

    private List<PodDisruptionBudget> listBudgetsOf(String namespace, DrainState next) {
        try {
            return client.policy().v1().podDisruptionBudget().inNamespace(namespace).list().getItems();
        } catch (KubernetesClientException e) {
            next.setLastApiError(BlockedByReport.tail("listing the PodDisruptionBudgets of namespace " + namespace + ": " + e.getMessage()));
            return null;
        }
    }

    private static boolean leaving(Pod pod, Set<String> evictedEarlier) {
        return pod.getMetadata().getDeletionTimestamp() != null || evictedEarlier.contains(refOf(pod).key());
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

    private static String action(DrainOptions options) {
        return Boolean.TRUE.equals(options.getDisableEviction()) ? "deleting (disableEviction bypasses PodDisruptionBudgets)" : "evicting";
    }

    private static DrainResult finish(Outcome outcome, DrainState state, String report, int remaining) {
        state.setNextAttemptAt(null);
        if (outcome != Outcome.DONE) {
            state.setBlockedBy(report);
        }
        return new DrainResult(outcome, null, report, state, remaining, List.of(), false, List.of());
    }

    private static DrainResult inProgress(DrainState state, String report, int remaining, List<BlockedByReport.BudgetHold> holds,
            boolean podsLeaving, Instant wanted, Instant attemptEndsAt, List<DrainEscalation.HeldPod> held) {
        Instant nextCheck = attemptEndsAt != null && attemptEndsAt.isBefore(wanted) ? attemptEndsAt : wanted;
        return new DrainResult(Outcome.IN_PROGRESS, nextCheck, report, state, remaining, holds, podsLeaving, held);
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
