package dev.cks.nodeops.upgrade;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Preflight;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

// An upgrade that changes under way could leave nodes at two targets; retry or re-create instead.
@ValidationRule(value = "self == oldSelf", message = "spec is immutable: create a new NodeUpgrade, or retry this one with the annotation nodeops.cks.dev/retry")
@ValidationRule(value = "!has(self.nodeSelector) || self.nodeSelector.all(k, size(k) <= 317 && k.matches('" + NodeUpgradeSpec.LABEL_KEY + "'))",
        message = "nodeSelector keys must be label keys: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'")
@ValidationRule(value = "!has(self.nodeSelector) || self.nodeSelector.all(k, self.nodeSelector[k].matches('" + NodeUpgradeSpec.LABEL_VALUE + "'))",
        message = "nodeSelector values must be label values: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
public class NodeUpgradeSpec {
    /** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters (values: the CRD caps them at 63). */
    static final String LABEL_KEY = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
    static final String LABEL_VALUE = "^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$";

    /** Semver with optional leading v, pre-release and build metadata (e.g. v1.33.4, 1.34.0-rc.1, v1.33.4+vendor.1). */
    public static final String VERSION_PATTERN =
            "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

    @JsonPropertyDescription("The Kubernetes version every selected node must report when done, e.g. v1.33.4.")
    @Required
    @Pattern(VERSION_PATTERN)
    private String targetVersion;

    @JsonPropertyDescription("Labels a node must have to be upgraded; empty selects every node.")
    @Size(max = 64)
    private Map<String, String> nodeSelector = new LinkedHashMap<>();

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

    @JsonPropertyDescription("Deadline of the whole upgrade in seconds.")
    @Default("7200")
    @Min(1)
    @Max(604800)
    private Integer timeoutSeconds = 7200;

    public String getTargetVersion() { return targetVersion; }
    public void setTargetVersion(String targetVersion) { this.targetVersion = targetVersion; }
    public Map<String, String> getNodeSelector() { return nodeSelector; }
    public void setNodeSelector(Map<String, String> nodeSelector) { this.nodeSelector = nodeSelector; }
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
}
