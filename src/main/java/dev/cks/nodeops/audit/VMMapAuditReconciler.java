package dev.cks.nodeops.audit;

import java.time.Clock;

import dev.cks.nodeops.common.Conditions;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;

@ControllerConfiguration(name = "vmmapaudit")
public class VMMapAuditReconciler implements Reconciler<VMMapAudit> {
    private final Clock clock;

    public VMMapAuditReconciler(Clock clock) {
        this.clock = clock;
    }

    @Override
    public UpdateControl<VMMapAudit> reconcile(VMMapAudit resource, Context<VMMapAudit> context) {
        VMMapAuditStatus status = resource.getStatus() == null ? new VMMapAuditStatus() : resource.getStatus();
        long generation = resource.getMetadata().getGeneration();
        Conditions.set(status.getConditions(), Conditions.ACCEPTED, true, "Valid", "the spec is valid", generation, clock.instant());
        if (status.getPhase() == null) {
            status.setPhase(VMMapAuditStatus.Phase.Pending);
        }
        status.setObservedGeneration(generation);
        resource.setStatus(status);
        return UpdateControl.patchStatus(resource);
    }
}
