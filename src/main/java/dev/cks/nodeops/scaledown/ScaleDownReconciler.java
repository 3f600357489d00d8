package dev.cks.nodeops.scaledown;

import java.time.Clock;
import java.util.List;

import dev.cks.nodeops.common.Conditions;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

@ControllerConfiguration(name = "scaledown")
public class ScaleDownReconciler implements Reconciler<ScaleDown> {
    private final Clock clock;

    public ScaleDownReconciler(Clock clock) {
        this.clock = clock;
    }

    @Override
    public UpdateControl<ScaleDown> reconcile(ScaleDown resource, Context<ScaleDown> context) {
        ScaleDownStatus status = resource.getStatus() == null ? new ScaleDownStatus() : resource.getStatus();
        List<String> problems = ScaleDownValidation.problems(resource.getSpec());
        long generation = resource.getMetadata().getGeneration();
        if (problems.isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "the spec is valid", generation, clock.instant());
            if (status.getPhase() == null) {
                status.setPhase(ScaleDownStatus.Phase.Pending);
            }
        } else {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "InvalidSpec", String.join("; ", problems), generation, clock.instant());
            status.setPhase(ScaleDownStatus.Phase.Failed);
            status.setMessage(String.join("; ", problems));
        }
        status.setObservedGeneration(generation);
        resource.setStatus(status);
        return UpdateControl.patchStatus(resource);
    }
}
