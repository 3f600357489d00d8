package dev.cks.nodeops.cloudstack.simulator;

/** Who owns a simulated resource: an account in a domain, optionally inside a project. */
public record Owner(String account, String domainId, String projectId) {

    public static Owner of(SimulatedAccount account) {
        return new Owner(account.name(), account.domainId(), null);
    }

    public static Owner project(SimulatedProject project) {
        return new Owner(project.accountName(), project.domainId(), project.id());
    }
}
