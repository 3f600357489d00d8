package dev.cks.nodeops.operation;

import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The places where a crash hurts most: right after a side effect (a node cordoned, a CloudStack write
 * answered, a Job created) and before the status that records it. Crash-safety tests halt the operator
 * at one of them and check that a new operator finishes the operation from what was persisted
 * (docs/reliability.md lists each point, its test and its verdict).
 *
 * <p>Reaching a point does nothing unless the test-only system property {@value #PROPERTY} names it
 * ({@code <point>} or {@code <point>@<n>} for its n-th time); then the JVM halts at once, with no
 * shutdown hook, no status patch and no lease release, as when the operator's node dies. Reconciler
 * tests in one JVM arm a point with {@link #armInProcess} instead, which throws.
 *
 * <p>The test-only property {@value #PAUSE_PROPERTY} names a point the same way, where the process stops
 * itself (SIGSTOP) instead, as a leader frozen in a long GC pause: a fencing test resumes it (SIGCONT) after
 * its Lease has passed to another replica and checks that it writes nothing more.
 */
public enum KillPoint {
    // ScaleDown: planning, cordon, drain, rollback
    SCALEDOWN_LOCKED("scaledown.locked", "every target locked, before the plan (nodes, deadline) is written"),
    SCALEDOWN_CORDONED("scaledown.cordoned", "a node cordoned, before status records it"),
    SCALEDOWN_DRAIN_STEP("scaledown.drain-step", "pods evicted in a drain step, before the drain state is written"),
    SCALEDOWN_ROLLBACK_RELEASED("scaledown.rollback.released", "a node uncordoned and unlocked in a rollback, before RolledBack is written"),
    // ScaleDown: removal by scaleKubernetesCluster
    SCALEDOWN_SCALE_INTENT("scaledown.scale.intent", "the removal intent persisted, before scaleKubernetesCluster is sent"),
    SCALEDOWN_SCALE_ANSWERED("scaledown.scale.answered", "scaleKubernetesCluster answered with its job, before the job id is written"),
    SCALEDOWN_SCALE_DONE("scaledown.scale.done", "the scale job seen succeeded, before any Node object is deleted"),
    SCALEDOWN_NODE_DELETED("scaledown.node-deleted", "the Node object of a removed VM deleted, before Succeeded is written"),
    // ScaleDown: removal of external nodes by removeNodesFromKubernetesCluster (CloudStack 4.21+)
    SCALEDOWN_REMOVE_NODES_INTENT("scaledown.remove-nodes.intent",
            "the removal intent (its command included) persisted, before removeNodesFromKubernetesCluster is sent"),
    SCALEDOWN_REMOVE_NODES_ANSWERED("scaledown.remove-nodes.answered",
            "removeNodesFromKubernetesCluster answered with its job, before the job id is written"),
    SCALEDOWN_REMOVE_NODES_DONE("scaledown.remove-nodes.done", "the remove-nodes job seen succeeded, before any Node object is deleted"),
    // ScaleDown: removal by destroyVirtualMachine
    SCALEDOWN_DESTROY_NODE_DELETED("scaledown.destroy.node-deleted", "a node's Node object deleted, before its VM is touched"),
    SCALEDOWN_UNMAP_ANSWERED("scaledown.unmap.answered",
            "removeVirtualMachinesFromKubernetesCluster answered, before the VM's removal from the map is written"),
    SCALEDOWN_DESTROY_INTENT("scaledown.destroy.intent", "a VM's destroy intent persisted, before destroyVirtualMachine is sent"),
    SCALEDOWN_DESTROY_ANSWERED("scaledown.destroy.answered", "destroyVirtualMachine answered with its job, before the job id is written"),
    SCALEDOWN_DESTROY_DONE("scaledown.destroy.done", "a destroy job seen succeeded, before the node is written Removed"),
    // ScaleDown: failure and deletion
    SCALEDOWN_FAILED_RELEASED("scaledown.failed.released", "a node still in the cluster given back after a failed removal, before Failed is written"),
    SCALEDOWN_DELETED_RELEASED("scaledown.deleted.released", "a node given back because the ScaleDown was deleted, before its finalizer is removed"),
    // NodeUpgrade: per node
    NODEUPGRADE_CANARY_ISO_INTENT("nodeupgrade.canary.attach-intent", "the ISO canary's attach intent persisted, before attachIso is sent"),
    NODEUPGRADE_CANARY_ISO_ATTACH_ANSWERED("nodeupgrade.canary.attach-answered", "the canary's attachIso answered with its job, before the job id is written"),
    NODEUPGRADE_CANARY_ISO_ATTACHED("nodeupgrade.canary.attached", "the canary's attach job seen succeeded, before Attached is written"),
    NODEUPGRADE_CANARY_JOB_CREATED("nodeupgrade.canary.job-created", "the canary's verification Job created, before its name is written"),
    NODEUPGRADE_CANARY_VERDICT_READ("nodeupgrade.canary.verdict-read", "the canary Job's verdict read from its log, before it is written"),
    NODEUPGRADE_CANARY_ISO_DETACH_ANSWERED("nodeupgrade.canary.detach-answered", "the canary's detachIso answered with its job, before the job id is written"),
    NODEUPGRADE_CANARY_ISO_DETACHED("nodeupgrade.canary.detached", "the canary's detach job seen succeeded, before Detached and the verdict's condition are written"),
    NODEUPGRADE_CANARY_JOB_DELETED("nodeupgrade.canary.job-deleted",
            "a given-up canary's Job deleted (its node given up; again as the canary moves on), before status records the skip or the move"),
    NODEUPGRADE_LOCKED("nodeupgrade.locked", "the node locked, before it is cordoned"),
    NODEUPGRADE_CORDONED("nodeupgrade.cordoned", "the node cordoned, before status records it"),
    NODEUPGRADE_DRAIN_STEP("nodeupgrade.drain-step", "pods evicted in a drain step, before the drain state is written"),
    NODEUPGRADE_ISO_INTENT("nodeupgrade.iso.attach-intent", "the ISO attach intent persisted, before attachIso is sent"),
    NODEUPGRADE_ISO_ATTACH_ANSWERED("nodeupgrade.iso.attach-answered", "attachIso answered with its job, before the job id is written"),
    NODEUPGRADE_ISO_ATTACHED("nodeupgrade.iso.attached", "the attach job seen succeeded, before Attached is written"),
    NODEUPGRADE_SCRIPT_WRITTEN("nodeupgrade.script-written", "the node script's ConfigMap written, before the Job is created"),
    NODEUPGRADE_JOB_CREATED("nodeupgrade.job-created", "the upgrade Job created, before its name is written"),
    NODEUPGRADE_ISO_DETACH_ANSWERED("nodeupgrade.iso.detach-answered", "detachIso answered with its job, before the job id is written"),
    NODEUPGRADE_ISO_DETACHED("nodeupgrade.iso.detached", "the detach job seen succeeded, before Detached is written"),
    NODEUPGRADE_RELEASED("nodeupgrade.released", "the upgraded node uncordoned and unlocked, before Succeeded is written"),
    NODEUPGRADE_FAILED_RELEASED("nodeupgrade.failed.released", "a failed node given back, before Failed is written"),
    NODEUPGRADE_JOB_ORPHANED("nodeupgrade.deleted.job-orphaned", "a running Job of a deleted NodeUpgrade orphaned, before its node is released"),
    NODEUPGRADE_DELETED_RELEASED("nodeupgrade.deleted.released", "a node given back because the NodeUpgrade was deleted, before its finalizer is removed");

    /** The test-only system property that arms one point. */
    public static final String PROPERTY = "cks-test.kill-at";
    /** The test-only system property that makes the process stop itself (SIGSTOP) at one point. */
    public static final String PAUSE_PROPERTY = "cks-test.pause-at";
    /** The exit status of a halted operator: 128 + SIGKILL, as a killed process reports. */
    public static final int EXIT_STATUS = 137;

    private static volatile Armed armed = Armed.parse(PROPERTY, System.getProperty(PROPERTY), KillPoint::halt)
            .or(() -> Armed.parse(PAUSE_PROPERTY, System.getProperty(PAUSE_PROPERTY), KillPoint::pause)).orElse(null);

    private final String pointName;
    private final String boundary;

    KillPoint(String pointName, String boundary) {
        this.pointName = pointName;
        this.boundary = boundary;
    }

    /** The name a test arms, e.g. {@code scaledown.scale.answered}. */
    public String pointName() {
        return pointName;
    }

    /** Where the point is: after which side effect, before which record. */
    public String boundary() {
        return boundary;
    }

    /** Marks the place in the code; halts (or, armed in process, throws) when a test armed this point and its count is due. */
    public void reached() {
        Armed current = armed;
        if (current != null && current.point == this && current.times.incrementAndGet() == current.nth) {
            current.action.run();
        }
    }

    public static Optional<KillPoint> named(String name) {
        return Arrays.stream(values()).filter(point -> point.pointName.equals(name)).findFirst();
    }

    /**
     * Arms a point for a test that runs a reconciler in its own JVM: reaching it the n-th time runs the
     * action (typically a throw that ends the reconcile as a crash would) instead of halting.
     *
     * @return closing it disarms the point
     */
    public static AutoCloseable armInProcess(KillPoint point, int nth, Runnable action) {
        Armed previous = armed;
        armed = new Armed(point, nth, action);
        return () -> armed = previous;
    }

    /** A point armed by name and occurrence. */
    private record Armed(KillPoint point, int nth, Runnable action, AtomicInteger times) {
        Armed(KillPoint point, int nth, Runnable action) {
            this(point, nth, action, new AtomicInteger());
        }

        /** {@code <point>} or {@code <point>@<n>}; an unknown name is an error, so a typo cannot make a test pass without a kill. */
        static Optional<Armed> parse(String property, String value, java.util.function.BiConsumer<KillPoint, Integer> action) {
            if (value == null || value.isBlank()) {
                return Optional.empty();
            }
            String[] parts = value.strip().split("@", 2);
            KillPoint point = named(parts[0]).orElseThrow(() -> new IllegalArgumentException(
                    "-D" + property + "=" + value + " names no kill point; the points are listed in docs/reliability.md"));
            int nth = parts.length == 2 ? Integer.parseInt(parts[1]) : 1;
            return Optional.of(new Armed(point, nth, () -> action.accept(point, nth)));
        }
    }

    private static void halt(KillPoint point, int nth) {
        // One line a test can look for in the operator's output; then no shutdown hook, no finally block.
        System.err.println("KILL POINT " + point.pointName + "@" + nth + " reached: halting (" + point.boundary + ")");
        System.err.flush();
        Runtime.getRuntime().halt(EXIT_STATUS);
    }

    /** A gap in the monotonic clock this long while spinning means the process was stopped and has resumed. */
    private static final long STOPPED_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /**
     * Stops every thread of the process where it is, until a SIGCONT. The thread that reached the point spins
     * meanwhile instead of waiting for the stopping child process: frozen while running, it runs on at once when the
     * process resumes, as a reconcile does after a GC pause, with no wake-up to wait for.
     */
    private static void pause(KillPoint point, int nth) {
        System.err.println("PAUSE POINT " + point.pointName + "@" + nth + " reached: stopping (" + point.boundary + ")");
        System.err.flush();
        try {
            new ProcessBuilder("kill", "-STOP", Long.toString(ProcessHandle.current().pid())).inheritIO().start();
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not stop the process at " + point.pointName + ": " + e.getMessage(), e);
        }
        long last = System.nanoTime();
        for (long now = last; now - last < STOPPED_NANOS; now = System.nanoTime()) {
            last = now;
            Thread.onSpinWait();
        }
    }
}
