package dev.cks.nodeops.drain;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.LabelSelector;

/**
 * One rung of the ladder a drain climbs while PodDisruptionBudgets keep it blocked: after the drain has
 * been blocked this long, do this. With a selector, the step applies only while pods it matches are among
 * those the budgets hold, and DeletePods deletes only those: deleting is never done without this opt-in.
 */
@ValidationRule(value = "self.action != 'DeletePods' || has(self.selector)",
        message = "DeletePods deletes only the pods its selector matches: set selector to opt workloads in")
@ValidationRule(value = "!has(self.gracePeriodSeconds) || self.action == 'DeletePods'", message = "gracePeriodSeconds applies to DeletePods only")
public class EscalationStep {
    public enum Action {
        /** A Warning event and the DrainBlocked condition naming the budgets and the pods they hold. */
        Warn,
        /** Delete the held pods the selector matches (bypassing their budget), with gracePeriodSeconds. */
        DeletePods,
        /** Give this node up: uncordon it, leave it as it is (not upgraded, not removed) and go on with the others. */
        SkipNode,
        /** NodeUpgrade: the node fails and the upgrade stops (what a drain that gives up does without a ladder). */
        Fail,
        /** ScaleDown: roll everything back (what a drain that gives up does without a ladder). */
        RollBack
    }

    @JsonPropertyDescription("Seconds the drain has been blocked (PodDisruptionBudgets hold pods and none has left the node; counted from when that began) before this step.")
    @Required
    @Min(10)
    private Integer afterSeconds;

    @JsonPropertyDescription("Warn, DeletePods (needs selector), SkipNode, Fail (NodeUpgrade) or RollBack (ScaleDown).")
    @Required
    private Action action;

    @JsonPropertyDescription("The pods this step is for: it applies only while the budgets hold pods it matches; DeletePods deletes only those.")
    private LabelSelector selector;

    @JsonPropertyDescription("DeletePods: grace period given to each pod; unset uses the pod's own terminationGracePeriodSeconds.")
    @Min(0)
    private Integer gracePeriodSeconds;

    public Integer getAfterSeconds() { return afterSeconds; }
    public void setAfterSeconds(Integer afterSeconds) { this.afterSeconds = afterSeconds; }
    public Action getAction() { return action; }
    public void setAction(Action action) { this.action = action; }
    public LabelSelector getSelector() { return selector; }
    public void setSelector(LabelSelector selector) { this.selector = selector; }
    public Integer getGracePeriodSeconds() { return gracePeriodSeconds; }
    public void setGracePeriodSeconds(Integer gracePeriodSeconds) { this.gracePeriodSeconds = gracePeriodSeconds; }
}
