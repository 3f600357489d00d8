package dev.cks.nodeops.operation;

/** The stages every node operation passes through; each kind maps them onto its own phases. */
public enum Stage {
    /** Nothing can be done now (CloudStack busy or unreachable, a node locked by another operation). */
    WAITING,
    /** Work goes on again after a wait. */
    RUNNING,
    /** Done with every node, and watching for one that falls below the target again (a Continuous NodeUpgrade only). */
    HOLDING,
    SUCCEEDED,
    /** Everything this operation changed was put back (ScaleDown only). */
    ROLLED_BACK,
    /** Refused, or failed part way. */
    FAILED
}
