package dev.cks.nodeops.upgrade;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.cloudstack.CloudStackResponses;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.LostAnswer;
import dev.cks.nodeops.operation.CloudStackWrite;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.operation.OperationRecorder;
import dev.cks.nodeops.operation.StatusStore;
import dev.cks.nodeops.operation.Step;
import dev.cks.nodeops.upgrade.UpgradeJobStep.Continue;
import dev.cks.nodeops.upgrade.UpgradeJobStep.NodeFailed;
import dev.cks.nodeops.upgrade.UpgradeJobStep.Outcome;
import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;

/**
 * The CloudStackIso executor's ISO on a node's VM: attached before its upgrade Job (attachIso), detached
 * after it whatever its outcome (detachIso), and detached before a node is given up. Both writes go
 * through {@link CloudStackWrite}; the node's {@code isoState} says which one its {@code isoRequestedAt}
 * and {@code isoJobId} belong to. A VM keeps no CD-ROM of ours. The ISO canary attaches and detaches
 * through its own instance, on its own {@link IsoRecord} and with kill points of its own.
 */
final class IsoAttachment {
    /** The kill points of a node's upgrade. */
    static final CloudStackWrite.KillPoints UPGRADE_ATTACH = new CloudStackWrite.KillPoints(KillPoint.NODEUPGRADE_ISO_INTENT,
            KillPoint.NODEUPGRADE_ISO_ATTACH_ANSWERED, KillPoint.NODEUPGRADE_ISO_ATTACHED);
    static final CloudStackWrite.KillPoints UPGRADE_DETACH = new CloudStackWrite.KillPoints(null,
            KillPoint.NODEUPGRADE_ISO_DETACH_ANSWERED, KillPoint.NODEUPGRADE_ISO_DETACHED);
    /** The kill points of the ISO canary. */
    static final CloudStackWrite.KillPoints CANARY_ATTACH = new CloudStackWrite.KillPoints(KillPoint.NODEUPGRADE_CANARY_ISO_INTENT,
            KillPoint.NODEUPGRADE_CANARY_ISO_ATTACH_ANSWERED, KillPoint.NODEUPGRADE_CANARY_ISO_ATTACHED);
    static final CloudStackWrite.KillPoints CANARY_DETACH = new CloudStackWrite.KillPoints(null,
            KillPoint.NODEUPGRADE_CANARY_ISO_DETACH_ANSWERED, KillPoint.NODEUPGRADE_CANARY_ISO_DETACHED);

    private final CloudStackIsoExecutor iso;
    private final OperationRecorder recorder;
    private final StatusStore store;
    private final CloudStackWrite writes;
    private final CloudStackWrite.KillPoints attachPoints;
    private final CloudStackWrite.KillPoints detachPoints;

    IsoAttachment(CloudStackIsoExecutor iso, OperationRecorder recorder, StatusStore store, Duration recheckCloudStack,
            CloudStackWrite.KillPoints attachPoints, CloudStackWrite.KillPoints detachPoints) {
        this.iso = iso;
        this.recorder = recorder;
        this.store = store;
        this.writes = new CloudStackWrite(recheckCloudStack);
        this.attachPoints = attachPoints;
        this.detachPoints = detachPoints;
    }

    /**
     * The version's ISO onto the node's VM. Chosen (VM, ISO) and checked before anything is asked; an ISO
     * already there is taken as attached, another one fails the node. Continue(next) once attached.
     */
    Outcome attach(NodeUpgrade upgrade, IsoRecord node, Instant now) {
        if (node.getIsoState() != IsoState.Attaching || node.getIsoRequestedAt() == null && node.getIsoJobId() == null) {
            Optional<Outcome> refused = chooseIso(upgrade, node);
            if (refused.isPresent()) {
                return refused.get();
            }
            node.setIsoState(IsoState.Attaching);
        }
        return attachOutcome(upgrade, node, advance(upgrade, attachWrite(upgrade, node), now));
    }

    private Optional<Outcome> chooseIso(NodeUpgrade upgrade, IsoRecord node) {
        KubernetesCluster cluster = cluster(upgrade);
        CloudStackIsoExecutor.Attachment attachment;
        try {
            attachment = iso.choose(cluster, node.getName(), UpgradeJobStep.versionId(upgrade), upgrade.getSpec().getTargetVersion());
        } catch (CloudStackIsoExecutor.Refused refused) {
            return Optional.of(new NodeFailed(refused.getMessage()));
        }
        Optional<String> carried = iso.attachedIso(cluster, attachment.vmId());
        node.setVmId(attachment.vmId());
        node.setIsoId(attachment.isoId());
        if (carried.isPresent() && !carried.get().equals(attachment.isoId())) {
            return Optional.of(new NodeFailed("VM " + attachment.vmId() + " of node " + node.getName() + " already has ISO " + carried.get()
                    + " attached; a VM has one CD-ROM. Detach it in CloudStack (detachIso), then retry the NodeUpgrade."));
        }
        return Optional.empty();
    }

    private Outcome attachOutcome(NodeUpgrade upgrade, IsoRecord node, CloudStackWrite.Outcome outcome) {
        if (outcome instanceof CloudStackWrite.Pending pending) {
            return new Continue(pending.step());
        }
        if (outcome instanceof CloudStackWrite.Done) {
            node.setIsoState(IsoState.Attached);
            forget(node);
            recorder.event(upgrade, "IsoAttached", "Attached ISO " + node.getIsoId() + " to VM " + node.getVmId() + " of node " + node.getName() + ".");
            return new Continue(Step.next());
        }
        node.setIsoState(IsoState.Detached);
        forget(node);
        return new NodeFailed(outcome instanceof CloudStackWrite.Refused refused ? refused.message() : ((CloudStackWrite.Failed) outcome).message());
    }

    /** The Job is over (or the node is given up): the ISO comes off next. */
    static void startDetaching(IsoRecord node) {
        node.setIsoState(IsoState.Detaching);
        forget(node);
    }

    /**
     * Empty once the ISO is detached; a Continue while CloudStack works on it; NodeFailed when CloudStack
     * refuses. A VM without an ISO, or CloudStack's "no ISO attached" answer, counts as detached.
     */
    Optional<Outcome> detach(NodeUpgrade upgrade, IsoRecord node, Instant now) {
        CloudStackWrite.Outcome outcome = advance(upgrade, detachWrite(upgrade, node), now);
        if (outcome instanceof CloudStackWrite.Pending pending) {
            return Optional.of(new Continue(pending.step()));
        }
        if (outcome instanceof CloudStackWrite.Done || noIsoAttached(outcome)) {
            node.setIsoState(IsoState.Detached);
            forget(node);
            recorder.event(upgrade, "IsoDetached", "Detached ISO " + node.getIsoId() + " from VM " + node.getVmId() + " of node " + node.getName() + ".");
            return Optional.empty();
        }
        String why = outcome instanceof CloudStackWrite.Refused refused ? refused.message() : ((CloudStackWrite.Failed) outcome).message();
        return Optional.of(new NodeFailed(why + " Detach it in CloudStack."));
    }

    /** TemplateManagerImpl.detachIso's answer for a VM without an ISO, as a refusal or as its failed job: detached already. */
    private static boolean noIsoAttached(CloudStackWrite.Outcome outcome) {
        return outcome instanceof CloudStackWrite.Refused refused && CloudStackIsoExecutor.foundNoIso(refused.message())
                || outcome instanceof CloudStackWrite.Failed failed && failed.job()
                        .filter(job -> CloudStackIsoExecutor.foundNoIso(CloudStackResponses.jobError(job).errorText())).isPresent();
    }

    /**
     * Before a failed node is given up: an ISO of ours still attached (or being attached) is detached
     * first. Empty when none is left; a detach CloudStack refuses is reported, not retried forever.
     */
    Optional<Step> detachBeforeGivingUp(NodeUpgrade upgrade, IsoRecord node, Instant now) {
        if (node.getIsoState() == null || node.getIsoState() == IsoState.Detached) {
            return Optional.empty();
        }
        // An attach still under way must end before the detach is asked for, or the ISO arrives after it.
        if (node.getIsoState() == IsoState.Attaching && (node.getIsoRequestedAt() != null || node.getIsoJobId() != null)) {
            Outcome attaching = attachOutcome(upgrade, node, advance(upgrade, attachWrite(upgrade, node), now));
            if (attaching instanceof Continue pending && node.getIsoState() == IsoState.Attaching) {
                return Optional.of(pending.step());
            }
        }
        if (node.getIsoState() != IsoState.Detaching) {
            startDetaching(node);
        }
        Optional<Outcome> detaching = detach(upgrade, node, now);
        if (detaching.isPresent() && detaching.get() instanceof Continue pending) {
            return Optional.of(pending.step());
        }
        if (detaching.isPresent() && detaching.get() instanceof NodeFailed failed) {
            recorder.warning(upgrade, "IsoNotDetached", failed.error());
            node.setIsoState(IsoState.Detached);
        }
        return Optional.empty();
    }

    private CloudStackWrite.Outcome advance(NodeUpgrade upgrade, CloudStackWrite.Write write, Instant now) {
        return writes.advance(iso.client(), write, recorder.writeReport(upgrade, store, "Upgrading", now), now);
    }

    private CloudStackWrite.Write attachWrite(NodeUpgrade upgrade, IsoRecord node) {
        CloudStackIsoExecutor.Attachment attachment = new CloudStackIsoExecutor.Attachment(upgrade.getStatus().getClusterId(), node.getVmId(),
                node.getIsoId());
        return new CloudStackWrite.Write(CloudStackCommand.ATTACH_ISO, "attachIso of ISO " + node.getIsoId() + " to VM " + node.getVmId()
                + " (node " + node.getName() + ")", LostAnswer.JobInstance.virtualMachine(node.getVmId()),
                client -> iso.attachedIso(cluster(upgrade), node.getVmId()).filter(node.getIsoId()::equals).isPresent(),
                client -> iso.startAttach(attachment), record(node), attachPoints);
    }

    private CloudStackWrite.Write detachWrite(NodeUpgrade upgrade, IsoRecord node) {
        return new CloudStackWrite.Write(CloudStackCommand.DETACH_ISO, "detachIso of ISO " + node.getIsoId() + " from VM " + node.getVmId()
                + " (node " + node.getName() + ")", LostAnswer.JobInstance.virtualMachine(node.getVmId()),
                client -> iso.attachedIso(cluster(upgrade), node.getVmId()).isEmpty(), client -> iso.startDetach(node.getVmId()), record(node),
                detachPoints);
    }

    private KubernetesCluster cluster(NodeUpgrade upgrade) {
        NodeUpgradeStatus status = upgrade.getStatus();
        KubernetesCluster cluster = iso.cluster(status.getClusterId(), status.getNodes().stream().map(UpgradeNodeStatus::getName).toList());
        status.setClusterId(cluster.id());
        return cluster;
    }

    private static CloudStackWrite.Record record(IsoRecord node) {
        return CloudStackWrite.Record.inStatus(node::getIsoRequestedAt, node::setIsoRequestedAt, node::getIsoJobId, node::setIsoJobId);
    }

    private static void forget(IsoRecord node) {
        node.setIsoJobId(null);
        node.setIsoRequestedAt(null);
    }
}
