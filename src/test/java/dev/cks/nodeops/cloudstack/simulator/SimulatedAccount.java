package dev.cks.nodeops.cloudstack.simulator;

/** A CloudStack account with one API key pair; {@code admin} accounts see every account's resources. */
public record SimulatedAccount(String name, String domainId, String domainName, String apiKey, String secretKey,
        boolean admin) {
}
