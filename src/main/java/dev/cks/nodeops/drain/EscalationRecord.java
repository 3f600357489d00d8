package dev.cks.nodeops.drain;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One step of the escalation ladder a node's drain took: when, for which budgets, on which pods, with what result. */
public class EscalationRecord {
    @JsonPropertyDescription("The step's place in spec.drain.escalation, counted from 1 in the order the steps come due.")
    private int step;
    @JsonPropertyDescription("The step's action: Warn, DeletePods, SkipNode, Fail or RollBack.")
    private EscalationStep.Action action;
    @JsonPropertyDescription("When the step was taken (RFC 3339, UTC).")
    private String at;
    @JsonPropertyDescription("The PodDisruptionBudgets (namespace/name) that held the drain.")
    private String cause;
    @JsonPropertyDescription("The held pods the step was for (namespace/name).")
    private String pods;
    @JsonPropertyDescription("What came of it: warned, what the API server answered for each pod deleted, or the node given up.")
    private String result;

    public int getStep() { return step; }
    public void setStep(int step) { this.step = step; }
    public EscalationStep.Action getAction() { return action; }
    public void setAction(EscalationStep.Action action) { this.action = action; }
    public String getAt() { return at; }
    public void setAt(String at) { this.at = at; }
    public String getCause() { return cause; }
    public void setCause(String cause) { this.cause = cause; }
    public String getPods() { return pods; }
    public void setPods(String pods) { this.pods = pods; }
    public String getResult() { return result; }
    public void setResult(String result) { this.result = result; }
}
