package dev.cks.nodeops.audit;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;

import io.quarkus.arc.DefaultBean;

/**
 * Stands in until the CloudStack client adapter is a bean: every run then reports CloudStack as
 * unreachable with this reason instead of the operator failing to start.
 */
@ApplicationScoped
@DefaultBean
public class UnwiredAuditSource implements AuditSource {
    static final String REASON = "The operator has no CloudStack client for the audit yet; no VM map can be read.";

    @Override
    public Optional<ClusterView> cluster(String clusterId) {
        throw new AuditSourceException(REASON);
    }

    @Override
    public List<OwnedVm> ownerVms(ClusterView cluster) {
        throw new AuditSourceException(REASON);
    }

    @Override
    public Set<String> otherClustersMappedIds(ClusterView cluster) {
        throw new AuditSourceException(REASON);
    }
}
