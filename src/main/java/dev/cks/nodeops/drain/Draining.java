package dev.cks.nodeops.drain;

/** How an operation drains its nodes, which decides where evicted pods can go meanwhile. */
public enum Draining {
    /** All nodes are cordoned before any is drained (ScaleDown): no evicted pod can go to any of them. */
    TOGETHER,
    /** One node at a time (NodeUpgrade): the others stay schedulable while it is drained. */
    ONE_AT_A_TIME
}
