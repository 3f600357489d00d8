package dev.cks.nodeops.cloudstack;

import java.util.Map;

/**
 * Whose resources a list call returns: an account (with its domain, which CloudStack requires
 * alongside the account name), a project, or whatever the API key's own account sees.
 */
public record OwnerScope(String account, String domainId, String projectId) {

    public static final OwnerScope CALLER = new OwnerScope(null, null, null);

    public OwnerScope {
        if ((account == null) != (domainId == null)) {
            throw new IllegalArgumentException("CloudStack needs both account and domainid to scope by account");
        }
        if (account != null && projectId != null) {
            throw new IllegalArgumentException("scope by account or by project, not both");
        }
    }

    public static OwnerScope account(String account, String domainId) {
        return new OwnerScope(account, domainId, null);
    }

    public static OwnerScope project(String projectId) {
        return new OwnerScope(null, null, projectId);
    }

    /** The scope a cluster's own resources live in. */
    public static OwnerScope of(KubernetesCluster cluster) {
        if (cluster.projectId() != null && !cluster.projectId().isBlank()) {
            return project(cluster.projectId());
        }
        return account(cluster.account(), cluster.domainId());
    }

    void addTo(Map<String, String> params) {
        if (projectId != null) {
            params.put("projectid", projectId);
        } else if (account != null) {
            params.put("account", account);
            params.put("domainid", domainId);
        }
    }
}
