package dev.cks.nodeops.scaledown;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import dev.cks.nodeops.drain.DrainOptions;
import dev.cks.nodeops.drain.Preflight;
import dev.cks.nodeops.operation.MaintenanceWindow;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

@ValidationRule(value = "has(self.nodeNames) != has(self.count)", message = "set exactly one of nodeNames and count")
@ValidationRule(value = "!has(self.selectionPolicy) || has(self.count)", message = "selectionPolicy applies only with count")
// Removing nodes is not undoable: a changed list mid-way could remove nodes nobody drained. Only when it
// runs may change: spec.paused and spec.window.
@ValidationRule(value = "has(self.nodeNames) == has(oldSelf.nodeNames) && (!has(self.nodeNames) || self.nodeNames == oldSelf.nodeNames)", message = "spec.nodeNames cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.count) == has(oldSelf.count) && (!has(self.count) || self.count == oldSelf.count)", message = "spec.count cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.selectionPolicy) == has(oldSelf.selectionPolicy) && (!has(self.selectionPolicy) || self.selectionPolicy == oldSelf.selectionPolicy)", message = "spec.selectionPolicy cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.removal) == has(oldSelf.removal) && (!has(self.removal) || self.removal == oldSelf.removal)", message = "spec.removal cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.drain) == has(oldSelf.drain) && (!has(self.drain) || self.drain == oldSelf.drain)", message = "spec.drain cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.preflight) == has(oldSelf.preflight) && (!has(self.preflight) || self.preflight == oldSelf.preflight)", message = "spec.preflight cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "has(self.timeoutSeconds) == has(oldSelf.timeoutSeconds) && (!has(self.timeoutSeconds) || self.timeoutSeconds == oldSelf.timeoutSeconds)", message = "spec.timeoutSeconds cannot change" + ScaleDownSpec.ONLY_MUTABLE)
@ValidationRule(value = "!has(self.drain) || !has(self.drain.escalation) || self.drain.escalation.all(s, s.action != 'Fail')",
        message = "a ScaleDown gives a blocked node up with RollBack or SkipNode; Fail is a NodeUpgrade's")
public class ScaleDownSpec {
    static final String ONLY_MUTABLE = " while the ScaleDown exists; only spec.paused and spec.window may. Create a new ScaleDown";
    public enum Removal {
        /** One scaleKubernetesCluster call with nodeids, for CloudManaged clusters: CloudStack keeps its map and size right. */
        CloudStackScale,
        /** Delete the Node, destroy and expunge the VM, remove it from the cluster's map: for ExternalManaged clusters. */
        DestroyVM
    }

    public enum SelectionPolicy {
        /**
         * Among Ready, schedulable workers in the CKS cluster's VM map that no other operation has locked:
         * the nodes with the fewest pods the drain would evict first; among equals the newest node
         * (latest creationTimestamp) first, then by name.
         */
        FewestPods
    }

    @JsonPropertyDescription("The worker nodes to remove.")
    @Size(min = 1, max = 100)
    private List<String> nodeNames;

    @JsonPropertyDescription("How many worker nodes to remove, picked by selectionPolicy.")
    @Min(1)
    private Integer count;

    @JsonPropertyDescription("How count picks nodes (default FewestPods). FewestPods: among Ready, schedulable workers in the CKS cluster's VM map that no other operation has locked, the nodes with the fewest pods the drain would evict first; among equals the newest node (latest creationTimestamp) first, then by name.")
    private SelectionPolicy selectionPolicy;

    @JsonPropertyDescription("CloudStackScale (CloudManaged clusters) or DestroyVM (ExternalManaged clusters).")
    @Default("CloudStackScale")
    private Removal removal = Removal.CloudStackScale;

    @JsonPropertyDescription("How the nodes are drained before they are removed.")
    private DrainOptions drain = new DrainOptions();

    @JsonPropertyDescription("Dry-run the evictions of every node before cordoning anything: Fail, Warn or Skip.")
    @Default("Warn")
    private Preflight preflight = Preflight.Warn;

    @JsonPropertyDescription("Seconds until every node must be drained; past it the scale-down rolls back. Removal, once begun, runs to the end. "
            + "Time held by spec.paused or outside spec.window does not count.")
    @Default("1800")
    @Min(1)
    private Integer timeoutSeconds = 1800;

    @JsonPropertyDescription("Stop at the next safe boundary (between drain steps, between nodes, before removal) and wait; false goes on. May change while the scale-down runs.")
    @Default("false")
    private Boolean paused = false;

    @JsonPropertyDescription("When nodes may be drained and removed; nothing new starts outside it. Without it, any time. May change while the scale-down runs.")
    private MaintenanceWindow window;

    public List<String> getNodeNames() { return nodeNames; }
    public void setNodeNames(List<String> nodeNames) { this.nodeNames = nodeNames; }
    public Integer getCount() { return count; }
    public void setCount(Integer count) { this.count = count; }
    public SelectionPolicy getSelectionPolicy() { return selectionPolicy; }
    public void setSelectionPolicy(SelectionPolicy selectionPolicy) { this.selectionPolicy = selectionPolicy; }
    public Removal getRemoval() { return removal; }
    public void setRemoval(Removal removal) { this.removal = removal; }
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
}
