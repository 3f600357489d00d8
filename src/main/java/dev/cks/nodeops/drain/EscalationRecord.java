package dev.cks.nodeops.drain;

/** One step of the escalation ladder a node's drain took: when, for which budgets, on which pods, with what result. */
public class EscalationRecord {
    /** The step's place in the ladder, 1-based, in the order steps come due. */
    private int step;
    private EscalationStep.Action action;
    private String at;
    /** The budgets (namespace/name) that held the drain. */
    private String cause;
    /** The held pods the step was for (namespace/name). */
    private String pods;
    /** warned, what DELETE answered per pod, or gave the node up. */
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
