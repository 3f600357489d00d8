package dev.cks.nodeops.cloudstack.simulator;

/** A project; CloudStack gives each one a hidden account that owns its resources. */
public record SimulatedProject(String id, String name, String domainId, String accountName) {
}
