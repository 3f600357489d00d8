package dev.cks.nodeops.cloudstack;

/**
 * Filters of a listVirtualMachines call.
 *
 * @param listAll ask for everything the key may see in that scope ({@code listall=true}); without
 *        it admins and domain admins only get their own VMs
 * @param keyword CloudStack's substring match on name/display name (e.g. a cluster's name prefix)
 */
public record VmQuery(OwnerScope owner, boolean listAll, String keyword) {

    public static VmQuery allOf(OwnerScope owner) {
        return new VmQuery(owner, true, null);
    }

    public VmQuery withKeyword(String text) {
        return new VmQuery(owner, listAll, text);
    }
}
