package dev.cks.nodeops.cloudstack.simulator;

/**
 * The hypervisor's side of attachIso and detachIso: TemplateManagerImpl.attachISOToVM sends an
 * AttachCommand to the host of a Running VM (a Stopped VM only gets the record), and the job fails
 * with "Failed to attach ISO" / "Failed to detach ISO" when the host could not. By default the
 * simulator keeps only the record; a real drive makes the ISO a block device the VM's guest sees.
 */
public interface IsoDrive {
    /** Puts the ISO into the VM's CD-ROM drive, replacing what is in it; throws when that fails. */
    void insert(String vmId, String isoId);

    /** Empties the VM's CD-ROM drive; throws when that fails. */
    void eject(String vmId);

    /** Only CloudStack's record: no VM's guest sees anything. */
    IsoDrive NONE = new IsoDrive() {
        @Override
        public void insert(String vmId, String isoId) {
        }

        @Override
        public void eject(String vmId) {
        }
    };
}
