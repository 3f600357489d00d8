package dev.cks.nodeops.audit;

/** The cluster's Nodes as the operator's cache holds them. */
public interface NodeSource {
    ClusterNodes read();
}
