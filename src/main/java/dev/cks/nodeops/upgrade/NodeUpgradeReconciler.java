package dev.cks.nodeops.upgrade;

import java.time.Clock;
import java.util.List;

import dev.cks.nodeops.common.Conditions;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

@ControllerConfiguration(name = "nodeupgrade")
public class NodeUpgradeReconciler implements Reconciler<NodeUpgrade> {
    private final Clock clock;

    public NodeUpgradeReconciler(Clock clock) {
        this.clock = clock;
    }

    @Override
    public UpdateControl<NodeUpgrade> reconcile(NodeUpgrade resource, Context<NodeUpgrade> context) {
        NodeUpgradeStatus status = resource.getStatus() == null ? new NodeUpgradeStatus() : resource.getStatus();
        List<String> problems = NodeUpgradeValidation.problems(resource.getSpec());
        long generation = resource.getMetadata().getGeneration();
        if (problems.isEmpty()) {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "the spec is valid", generation, clock.instant());
            if (status.getPhase() == null) {
                status.setPhase(NodeUpgradeStatus.Phase.Pending);
            }
        } else {
            Conditions.set(status.getConditions(), Conditions.ACCEPTED, false, "InvalidSpec", String.join("; ", problems), generation, clock.instant());
            status.setPhase(NodeUpgradeStatus.Phase.Failed);
            status.setMessage(String.join("; ", problems));
        }
        status.setObservedGeneration(generation);
        resource.setStatus(status);
        return UpdateControl.patchStatus(resource);
    }
}
