package dev.cks.nodeops.upgrade;

/** What a NodeUpgrade does once its rollout is over (docs/continuous.md). */
public enum UpgradeMode {
    /** It ends: Succeeded or Failed. */
    Once,
    /** It holds: every node its selector matches that is found below the target is upgraded, with the rollout's rules. */
    Continuous
}
