package dev.cks.nodeops.cloudstack.simulator;

/** A Kubernetes supported version with its binaries ISO. */
public record SimulatedVersion(String id, String name, String semanticVersion, String isoId, String isoName,
        String isoState, String state) {
}
