package dev.cks.nodeops.common;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Condition;

/** Status fields every kind of this API has, so the three kinds read alike in `kubectl describe`. */
public abstract class OperationStatus {
    private Long observedGeneration;
    private List<Condition> conditions = new ArrayList<>();
    private String startedAt;
    private String completedAt;
    private String deadline;
    /** One line for humans: what is happening or what went wrong. */
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
