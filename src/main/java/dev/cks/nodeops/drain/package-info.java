/**
 * Draining nodes the Kubernetes way, for NodeUpgrade and ScaleDown.
 *
 * <p>How a reconciler uses it:
 * <ol>
 * <li>{@link dev.cks.nodeops.drain.DrainPreflight#check} for all nodes of the operation, before anything is
 * cordoned (dry-run evictions and PodDisruptionBudget numbers); {@code spec.preflight} decides what a
 * predicted block means.</li>
 * <li>{@link dev.cks.nodeops.nodes.Cordon#cordon} the node; store {@code cordonedByUs} in the node's status.</li>
 * <li>Call {@link dev.cks.nodeops.drain.NodeDrainer#step} with the stored {@link dev.cks.nodeops.drain.DrainState};
 * store the returned state; requeue at {@code nextCheckAt} while IN_PROGRESS. BLOCKED and FAILED carry the
 * report that conditions and events show.</li>
 * <li>On rollback or success, {@link dev.cks.nodeops.nodes.Cordon#uncordon} (it only uncordons what this
 * operation cordoned).</li>
 * </ol>
 *
 * <p>Evictions are budget-aware: before each round the drain reads the PodDisruptionBudgets of the pods'
 * namespaces and sends, per budget, at most {@code status.disruptionsAllowed} evictions
 * ({@link dev.cks.nodeops.drain.EvictionRound}); the rest wait instead of costing a 429 each. The API
 * server still decides every eviction.
 *
 * <p>Given a wake-up, a step reads the node's pods and the budgets from {@link dev.cks.nodeops.drain.DrainWatches}
 * (per node, started by its first step, stopped when its drain ends), which wake the drain's owner when a
 * pod leaves or a budget allows more; evictions the watch does not show yet still count against their
 * budget ({@link dev.cks.nodeops.drain.SpentBudgets}), and "drained" is confirmed by a list.
 *
 * <p>Pure decisions ({@link dev.cks.nodeops.drain.PodFilters}, {@link dev.cks.nodeops.drain.PodSelection}, {@link dev.cks.nodeops.drain.PodSelector},
 * {@link dev.cks.nodeops.drain.DrainSchedule}, {@link dev.cks.nodeops.drain.EvictionRound}, {@link dev.cks.nodeops.drain.SpentBudgets},
 * {@link dev.cks.nodeops.drain.BlockedByReport}, {@link dev.cks.nodeops.drain.PreflightPrediction}) are unit-tested; the API edges
 * ({@link dev.cks.nodeops.drain.EvictionApi}, the list calls in the drainer and the preflight) are tested
 * against the real control plane of the test bed.
 */
package dev.cks.nodeops.drain;
