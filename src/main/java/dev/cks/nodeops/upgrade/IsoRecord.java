package dev.cks.nodeops.upgrade;

import dev.cks.nodeops.upgrade.UpgradeNodeStatus.IsoState;

/**
 * Where a status keeps one ISO on one node's VM and the CloudStack write under way for it: a node's upgrade
 * ({@link UpgradeNodeStatus}) and the ISO canary ({@link IsoCanaryStatus}) each keep one, and
 * {@link IsoAttachment} attaches and detaches through either.
 */
interface IsoRecord {
    String getName();

    String getVmId();

    void setVmId(String vmId);

    String getIsoId();

    void setIsoId(String isoId);

    IsoState getIsoState();

    void setIsoState(IsoState isoState);

    String getIsoJobId();

    void setIsoJobId(String isoJobId);

    String getIsoRequestedAt();

    void setIsoRequestedAt(String isoRequestedAt);
}
