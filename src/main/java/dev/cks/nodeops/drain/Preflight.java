package dev.cks.nodeops.drain;

/** What to do when a dry-run of the evictions predicts that a drain will be blocked. */
public enum Preflight {
    /** Refuse to start; nothing is cordoned. */
    Fail,
    /** Start anyway, with a Warning event and condition naming what will block. */
    Warn,
    /** Do not run the dry-run at all. */
    Skip
}
