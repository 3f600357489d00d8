package dev.cks.nodeops.common;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.kubernetes.api.model.Condition;

/** Status fields every kind of this API has, so the three kinds read alike in `kubectl describe`. */
public abstract class OperationStatus {
    @JsonPropertyDescription("The metadata.generation of the spec the operator last acted on; lower than metadata.generation while a spec change is not yet taken up.")
    private Long observedGeneration;
    @JsonPropertyDescription("The latest observations, one per type, as `kubectl describe` shows them: e.g. Accepted, Progressing, Waiting,"
            + " Paused, DrainBlocked, Succeeded, Failed, RolledBack for an operation; InSync, CloudStackReachable, NodesReadable for an audit.")
    private List<Condition> conditions = new ArrayList<>();
    @JsonPropertyDescription("When the operation began (RFC 3339, UTC; a retried NodeUpgrade begins anew). A VMMapAudit leaves it empty: its runs are in lastRun.")
    private String startedAt;
    @JsonPropertyDescription("When the operation ended (Succeeded, Failed or RolledBack); empty while it runs or holds. A VMMapAudit leaves it empty.")
    private String completedAt;
    @JsonPropertyDescription("When the operation gives up: spec.timeoutSeconds after it began (or after a Continuous NodeUpgrade's latest"
            + " correction began), moved later by the time it was held (paused or outside its window). A VMMapAudit leaves it empty.")
    private String deadline;
    @JsonPropertyDescription("One line for humans: what is happening or what went wrong.")
    private String message;

    public Long getObservedGeneration() { return observedGeneration; }
    public void setObservedGeneration(Long observedGeneration) { this.observedGeneration = observedGeneration; }
    public List<Condition> getConditions() { return conditions; }
    public void setConditions(List<Condition> conditions) { this.conditions = conditions == null ? new ArrayList<>() : conditions; }
    public String getStartedAt() { return startedAt; }
    public void setStartedAt(String startedAt) { this.startedAt = startedAt; }
    public String getCompletedAt() { return completedAt; }
    public void setCompletedAt(String completedAt) { this.completedAt = completedAt; }
    public String getDeadline() { return deadline; }
    public void setDeadline(String deadline) { this.deadline = deadline; }
    public String getMessage() { return message; }
    public void setMessage(String message) { this.message = message; }
}
