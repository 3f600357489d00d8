package dev.cks.nodeops.cloudstack.simulator;

/**
 * One user of a CloudStack account, with that user's API key pair; {@code admin} accounts see every
 * account's resources. Several users (several key pairs) may belong to one account, as in CloudStack,
 * where the account, not the user, owns resources and async jobs and carries the role.
 */
public record SimulatedAccount(String name, String domainId, String domainName, String apiKey, String secretKey,
        boolean admin, String userName) {

    /** The account this user belongs to: its name within its domain. */
    public String accountKey() {
        return domainId + "/" + name;
    }

    public boolean sameAccountAs(SimulatedAccount other) {
        return accountKey().equals(other.accountKey());
    }
}
