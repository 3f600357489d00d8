package dev.cks.nodeops.nodes;

public enum NodeRole {
    ControlPlane,
    Worker
}
