package dev.cks.nodeops.cloudstack.simulator;

/** The part a VM plays in a CKS cluster; {@code NONE} for VMs outside any cluster. */
public enum NodeRole {
    CONTROL, WORKER, ETCD, NONE
}
