package dev.cks.nodeops.audit;

import java.time.Instant;

/**
 * A VM of the cluster's owner (account or project) from listVirtualMachines.
 *
 * @param name the VM's name, which CKS also uses as its host name
 * @param created null when CloudStack did not say
 * @param lastStateChange when the VM last changed (CloudStack's {@code lastupdated}); null when unknown
 */
public record OwnedVm(String id, String name, String state, Instant created, Instant lastStateChange) {
}
