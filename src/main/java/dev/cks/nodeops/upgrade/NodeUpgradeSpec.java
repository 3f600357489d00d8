package dev.cks.nodeops.upgrade;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.MaintenanceWindow;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

// An upgrade that changes under way could leave nodes at two targets; retry or re-create instead. Only how
// and when it runs may change: spec.paused, spec.window and spec.maxUnavailable.
// A Continuous NodeUpgrade holds a version: changing it starts a new rollout to the new one (with the skew guard).
// Which nodes, and the rules of that: NodeSelectionSpec.
@ValidationRule(value = "self.targetVersion == oldSelf.targetVersion || (has(self.mode) && self.mode == 'Continuous' && has(oldSelf.mode) && oldSelf.mode == 'Continuous')",
        message = "spec.targetVersion cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.mode) == has(oldSelf.mode) && (!has(self.mode) || self.mode == oldSelf.mode)", message = "spec.mode cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.holdIntervalSeconds) == has(oldSelf.holdIntervalSeconds) && (!has(self.holdIntervalSeconds) || self.holdIntervalSeconds == oldSelf.holdIntervalSeconds)", message = "spec.holdIntervalSeconds cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "(has(self.nodeSelector) == has(oldSelf.nodeSelector) && (!has(self.nodeSelector) || self.nodeSelector == oldSelf.nodeSelector)) || "
        + NodeUpgradeSpec.MOVED_TO_SELECTOR, message = "spec.nodeSelector cannot change (its labels may move to spec.selector.matchLabels)" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "(has(self.selector) == has(oldSelf.selector) && (!has(self.selector) || self.selector == oldSelf.selector)) || "
        + NodeUpgradeSpec.MOVED_TO_SELECTOR, message = "spec.selector cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.executor) == has(oldSelf.executor) && (!has(self.executor) || self.executor == oldSelf.executor)", message = "spec.executor cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.readyTimeoutSeconds) == has(oldSelf.readyTimeoutSeconds) && (!has(self.readyTimeoutSeconds) || self.readyTimeoutSeconds == oldSelf.readyTimeoutSeconds)", message = "spec.readyTimeoutSeconds cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.drain) == has(oldSelf.drain) && (!has(self.drain) || self.drain == oldSelf.drain)", message = "spec.drain cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.preflight) == has(oldSelf.preflight) && (!has(self.preflight) || self.preflight == oldSelf.preflight)", message = "spec.preflight cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.timeoutSeconds) == has(oldSelf.timeoutSeconds) && (!has(self.timeoutSeconds) || self.timeoutSeconds == oldSelf.timeoutSeconds)", message = "spec.timeoutSeconds cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.soakSeconds) == has(oldSelf.soakSeconds) && (!has(self.soakSeconds) || self.soakSeconds == oldSelf.soakSeconds)", message = "spec.soakSeconds cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.waitForDrainedWorkloads) == has(oldSelf.waitForDrainedWorkloads) && (!has(self.waitForDrainedWorkloads) || self.waitForDrainedWorkloads == oldSelf.waitForDrainedWorkloads)", message = "spec.waitForDrainedWorkloads cannot change" + NodeUpgradeSpec.ONLY_MUTABLE)
@ValidationRule(value = "!has(self.drain) || !has(self.drain.escalation) || self.drain.escalation.all(s, s.action != 'RollBack')",
        message = "a NodeUpgrade gives a blocked node up with Fail or SkipNode; RollBack is a ScaleDown's")
public class NodeUpgradeSpec extends NodeSelectionSpec {
    /**
     * A NodeUpgrade's nodeSelector moved to spec.selector: removed, with the same labels as selector.matchLabels and no
     * matchExpressions. It selects the same nodes, so it is no change of the upgrade.
     */
    static final String MOVED_TO_SELECTOR = "(has(oldSelf.nodeSelector) && !has(self.nodeSelector) && !has(oldSelf.selector) && has(self.selector)"
            + " && (!has(self.selector.matchExpressions) || size(self.selector.matchExpressions) == 0)"
            + " && (has(self.selector.matchLabels) ? self.selector.matchLabels == oldSelf.nodeSelector : size(oldSelf.nodeSelector) == 0))";

    static final String ONLY_MUTABLE = " while the NodeUpgrade exists; only spec.paused, spec.window and spec.maxUnavailable may"
            + " (and spec.targetVersion of a Continuous one). "
            + "Create a new NodeUpgrade, or retry this one with the annotation nodeops.cks.dev/retry";
    /** Semver with optional leading v, pre-release and build metadata (e.g. v1.33.4, 1.34.0-rc.1, v1.33.4+vendor.1). */
    public static final String VERSION_PATTERN =
            "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

    @JsonPropertyDescription("The Kubernetes version every selected node must report when done, e.g. v1.33.4.")
    @Required
    @Pattern(VERSION_PATTERN)
    private String targetVersion;

    @JsonPropertyDescription("How the upgrade runs on each node.")
    @Required
    private UpgradeExecutor executor;

    @JsonPropertyDescription("Seconds to wait, after the executor finished, for the node to be Ready at the target version.")
    @Default("600")
    @Min(1)
    @Max(86400)
    private Integer readyTimeoutSeconds = 600;

    @JsonPropertyDescription("How each node is drained before it is upgraded.")
    private DrainOptions drain = new DrainOptions();

    @JsonPropertyDescription("Dry-run the evictions of every node before cordoning anything: Fail, Warn or Skip.")
    @Default("Warn")
    private Preflight preflight = Preflight.Warn;

    @JsonPropertyDescription("Deadline of the whole upgrade in seconds; time held by spec.paused or outside spec.window does not count.")
    @Default("7200")
    @Min(1)
    @Max(604800)
    private Integer timeoutSeconds = 7200;

    @JsonPropertyDescription("Stop at the next safe boundary (between drain steps, before a node's upgrade Job, between nodes) and wait; false goes on. May change while the upgrade runs.")
    @Default("false")
    private Boolean paused = false;

    @JsonPropertyDescription("When nodes may be upgraded; nothing new starts outside it. Without it, any time. May change while the upgrade runs.")
    private MaintenanceWindow window;

    @JsonPropertyDescription("Workers upgraded at once: a count (at least 1) or a percentage of the selected workers (rounded down, at least 1). "
            + "Selected workers that are NotReady or cordoned by someone else count against it. Control-plane nodes are always upgraded one at a time, "
            + "the first alone, before any worker. May change while the upgrade runs.")
    @Default("1")
    @ValidationRule(value = "type(self) == int ? self >= 1 : self.matches('^(100|[1-9][0-9]?)%$')",
            message = "maxUnavailable is a count of at least 1 or a percentage from 1% to 100%")
    private IntOrString maxUnavailable = new IntOrString(1);

    @JsonPropertyDescription("Seconds to wait after a node is Ready at the target (and uncordoned) before the node it makes room for starts.")
    @Default("0")
    @Min(0)
    private Integer soakSeconds = 0;

    @JsonPropertyDescription("After the soak, also wait until the workloads whose pods the drain evicted from the node have all their pods Ready again.")
    @Default("false")
    private Boolean waitForDrainedWorkloads = false;

    @JsonPropertyDescription("Once: the upgrade ends when its nodes are done. Continuous: it then holds the version, upgrading every node its "
            + "selector matches that joins, returns or is found below the target, with the same rules; nodes newer than the target are reported, "
            + "never taken down. Fixed once created.")
    @Default("Once")
    private UpgradeMode mode = UpgradeMode.Once;

    @JsonPropertyDescription("Continuous only: how often the held nodes are looked at again, besides every Node change that may concern them.")
    @Default("60")
    @Min(5)
    @Max(86400)
    private Integer holdIntervalSeconds = 60;

    public String getTargetVersion() { return targetVersion; }
    public void setTargetVersion(String targetVersion) { this.targetVersion = targetVersion; }
    public UpgradeExecutor getExecutor() { return executor; }
    public void setExecutor(UpgradeExecutor executor) { this.executor = executor; }
    public Integer getReadyTimeoutSeconds() { return readyTimeoutSeconds; }
    public void setReadyTimeoutSeconds(Integer readyTimeoutSeconds) { this.readyTimeoutSeconds = readyTimeoutSeconds; }
    public DrainOptions getDrain() { return drain; }
    public void setDrain(DrainOptions drain) { this.drain = drain; }
    public Preflight getPreflight() { return preflight; }
    public void setPreflight(Preflight preflight) { this.preflight = preflight; }
    public Integer getTimeoutSeconds() { return timeoutSeconds; }
    public void setTimeoutSeconds(Integer timeoutSeconds) { this.timeoutSeconds = timeoutSeconds; }
    public Boolean getPaused() { return paused; }
    public void setPaused(Boolean paused) { this.paused = paused; }
    public MaintenanceWindow getWindow() { return window; }
    public void setWindow(MaintenanceWindow window) { this.window = window; }
    public IntOrString getMaxUnavailable() { return maxUnavailable; }
    public void setMaxUnavailable(IntOrString maxUnavailable) { this.maxUnavailable = maxUnavailable; }
    public Integer getSoakSeconds() { return soakSeconds; }
    public void setSoakSeconds(Integer soakSeconds) { this.soakSeconds = soakSeconds; }
    public UpgradeMode getMode() { return mode; }
    public void setMode(UpgradeMode mode) { this.mode = mode; }
    public Integer getHoldIntervalSeconds() { return holdIntervalSeconds; }
    public void setHoldIntervalSeconds(Integer holdIntervalSeconds) { this.holdIntervalSeconds = holdIntervalSeconds; }

    /** Not a bean property (no "is"/"get"), so it stays out of the CRD. */
    public boolean continuous() {
        return mode == UpgradeMode.Continuous;
    }

    /**
     * This spec with another target: a Continuous NodeUpgrade whose target changed finishes the nodes in progress at the
     * version their Jobs were made for before its new rollout begins.
     */
    NodeUpgradeSpec withTargetVersion(String version) {
        NodeUpgradeSpec copy = new NodeUpgradeSpec();
        copy.targetVersion = version;
        copy.setSelector(getSelector());
        copy.setNodeSelector(getNodeSelector());
        copy.executor = executor;
        copy.readyTimeoutSeconds = readyTimeoutSeconds;
        copy.drain = drain;
        copy.preflight = preflight;
        copy.timeoutSeconds = timeoutSeconds;
        copy.paused = paused;
        copy.window = window;
        copy.maxUnavailable = maxUnavailable;
        copy.soakSeconds = soakSeconds;
        copy.waitForDrainedWorkloads = waitForDrainedWorkloads;
        copy.mode = mode;
        copy.holdIntervalSeconds = holdIntervalSeconds;
        return copy;
    }

    public Boolean getWaitForDrainedWorkloads() { return waitForDrainedWorkloads; }
    public void setWaitForDrainedWorkloads(Boolean waitForDrainedWorkloads) { this.waitForDrainedWorkloads = waitForDrainedWorkloads; }
}
