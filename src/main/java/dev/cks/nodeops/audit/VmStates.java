package dev.cks.nodeops.audit;

/** CloudStack VM states (VirtualMachine.State) the audit tells apart. */
final class VmStates {
    static final String RUNNING = "Running";
    static final String ERROR = "Error";
    static final String EXPUNGED = "Expunged";

    private VmStates() {
    }

    /** Destroyed VMs can still be recovered until expunged, but for the cluster they are gone. */
    static boolean isGone(String state) {
        return "Destroyed".equalsIgnoreCase(state) || "Expunging".equalsIgnoreCase(state) || EXPUNGED.equalsIgnoreCase(state);
    }
}
