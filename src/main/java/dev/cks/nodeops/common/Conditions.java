package dev.cks.nodeops.common;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;

/** The one place conditions are written, following the metav1.Condition conventions. */
public final class Conditions {
    public static final String ACCEPTED = "Accepted";
    public static final String PROGRESSING = "Progressing";
    public static final String SUCCEEDED = "Succeeded";
    public static final String FAILED = "Failed";
    public static final String ROLLED_BACK = "RolledBack";
    public static final String WAITING = "Waiting";
    /** spec.paused: True once the operation stopped at a safe boundary, False (reason Pausing) while it gets there. */
    public static final String PAUSED = "Paused";
    /** True while a node's drain is blocked past the escalation ladder's Warn step; names the budgets and the pods they hold. */
    public static final String DRAIN_BLOCKED = "DrainBlocked";
    public static final String IN_SYNC = "InSync";
    /** On a DrainReport: True while every node it reports could be drained now. */
    public static final String DRAINABLE = "Drainable";
    public static final String CLOUDSTACK_REACHABLE = "CloudStackReachable";
    /** VMMapAudit: whether the operator's view of the Nodes is current (it may list them and its watch runs). */
    public static final String NODES_READABLE = "NodesReadable";
    /** NodeUpgrade (CloudStackIso): whether CloudStack's recorded cluster and node versions match the upgrade's target. */
    public static final String CLOUDSTACK_RECORD_CURRENT = "CloudStackRecordCurrent";
    /**
     * NodeUpgrade (CloudStackIso): whether the ISO's addon manifests (network.yaml, headlamp.yaml or dashboard.yaml) were
     * applied after `kubeadm upgrade apply` on the first control-plane node; False names the one that failed.
     */
    public static final String ADDONS_APPLIED = "AddonsApplied";
    /** False when the CloudStack API URL is plain http: keys' signatures and answers cross the network unencrypted. */
    public static final String CLOUDSTACK_TLS = "CloudStackTLS";
    /** A Continuous NodeUpgrade: True while every selected node it may touch is at the target and it watches; False while it corrects one. */
    public static final String HOLDING = "Holding";
    /** NodeUpgrade (CloudStackIso): the ISO canary's verdict on the target version's binaries ISO. */
    public static final String ISO_VERIFIED = "IsoVerified";
    /** A Continuous NodeUpgrade: True while another Continuous NodeUpgrade selects one of its nodes (the later one is refused); names it. */
    public static final String OVERLAPPING = "Overlapping";

    private static final int MAX_MESSAGE = 32 * 1024;

    private Conditions() {
    }

    /**
     * Sets a condition; lastTransitionTime changes only when the status does, so a condition
     * that is merely re-asserted does not look like a new event.
     */
    public static void set(List<Condition> conditions, String type, boolean status, String reason, String message,
            Long observedGeneration, Instant now) {
        put(conditions, type, status ? "True" : "False", reason, message, observedGeneration, now);
    }

    /** For a condition that cannot be judged right now (e.g. the check it reports on was skipped). */
    public static void setUnknown(List<Condition> conditions, String type, String reason, String message,
            Long observedGeneration, Instant now) {
        put(conditions, type, "Unknown", reason, message, observedGeneration, now);
    }

    private static void put(List<Condition> conditions, String type, String statusText, String reason, String message,
            Long observedGeneration, Instant now) {
        String trimmed = message == null ? "" : message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message;
        Optional<Condition> existing = find(conditions, type);
        String transition = existing.filter(c -> statusText.equals(c.getStatus()))
                .map(Condition::getLastTransitionTime)
                .orElse(Timestamps.format(now));
        Condition updated = new ConditionBuilder()
                .withType(type)
                .withStatus(statusText)
                .withReason(reason)
                .withMessage(trimmed)
                .withObservedGeneration(observedGeneration)
                .withLastTransitionTime(transition)
                .build();
        existing.ifPresentOrElse(c -> conditions.set(conditions.indexOf(c), updated), () -> conditions.add(updated));
    }

    public static void remove(List<Condition> conditions, String type) {
        conditions.removeIf(c -> type.equals(c.getType()));
    }

    public static Optional<Condition> find(List<Condition> conditions, String type) {
        return conditions == null ? Optional.empty()
                : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    public static boolean isTrue(List<Condition> conditions, String type) {
        return find(conditions, type).map(c -> "True".equals(c.getStatus())).orElse(false);
    }
}
