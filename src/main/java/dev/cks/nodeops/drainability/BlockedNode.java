package dev.cks.nodeops.drainability;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One node a drain could not finish on now, as status.blockedNodes lists it. */
public class BlockedNode {
    @JsonPropertyDescription("The Node's name.")
    private String name;
    /** When a pass first found it blocked (by any cause) since it was last drainable. */
    @JsonPropertyDescription("When a pass first found it blocked (by any cause) since it was last drainable (RFC 3339, UTC).")
    private String since;
    @JsonPropertyDescription("What kinds of blockers it has: PodDisruptionBudget, NoRoomForReplacements, BarePod, LocalStorage, DaemonSet,"
            + " PodPolicy, OptedOut.")
    private List<Drainability.Cause> causes = new ArrayList<>();
    /** What blocks it, one sentence each naming the pod or budget and what would let it go; at most {@link BlockedNodes#MAX_REASONS}. */
    @JsonPropertyDescription("What blocks it, one sentence each naming the pod or budget (with its numbers) and what would let it go; at most 5.")
    private List<String> reasons = new ArrayList<>();

    public BlockedNode() {
    }

    BlockedNode(String name, String since, List<Drainability.Cause> causes, List<String> reasons) {
        this.name = name;
        this.since = since;
        this.causes = new ArrayList<>(causes);
        this.reasons = new ArrayList<>(reasons);
    }

    public String getName() { return name; }
    public void setName(String name) { this.name = name; }
    public String getSince() { return since; }
    public void setSince(String since) { this.since = since; }
    public List<Drainability.Cause> getCauses() { return causes; }
    public void setCauses(List<Drainability.Cause> causes) { this.causes = causes == null ? new ArrayList<>() : causes; }
    public List<String> getReasons() { return reasons; }
    public void setReasons(List<String> reasons) { this.reasons = reasons == null ? new ArrayList<>() : reasons; }
}
