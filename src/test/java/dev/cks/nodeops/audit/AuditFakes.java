package dev.cks.nodeops.audit;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;

/** Test doubles of the audit's ports. */
final class AuditFakes {
    private AuditFakes() {
    }

    /**
     * CloudStack as the audit sees it. Queued cluster readings are answered first, to simulate change
     * during a run; a blank id finds the cluster as discovery by node names would.
     */
    static final class FakeCloudStack implements AuditSource {
        ClusterView cluster;
        final Deque<Optional<ClusterView>> queuedReadings = new ArrayDeque<>();
        List<OwnedVm> ownerVms = new ArrayList<>();
        Set<String> otherMaps = new HashSet<>();
        AuditSourceException failure;
        final List<String> calls = new ArrayList<>();

        @Override
        public ClusterLookup cluster(String clusterId, Collection<String> nodeNames) {
            calls.add("cluster " + clusterId);
            failIfAsked();
            Optional<ClusterView> answer = !queuedReadings.isEmpty() ? queuedReadings.poll()
                    : Optional.ofNullable(cluster).filter(c -> clusterId == null || clusterId.isBlank() || c.id().equals(clusterId));
            return answer.map(ClusterLookup::found).orElseGet(() -> ClusterLookup.refused(
                    "CloudStack has no Kubernetes cluster with id " + clusterId + " visible to these API keys."));
        }

        @Override
        public List<OwnedVm> ownerVms(ClusterView cluster) {
            calls.add("ownerVms");
            failIfAsked();
            return ownerVms;
        }

        @Override
        public Set<String> otherClustersMappedIds(ClusterView cluster) {
            calls.add("otherMaps");
            failIfAsked();
            return otherMaps;
        }

        private void failIfAsked() {
            if (failure != null) {
                throw failure;
            }
        }
    }

    static final class FakeNodes implements NodeSource {
        ClusterNodes current = ClusterNodes.of(List.of());

        @Override
        public ClusterNodes read() {
            return current;
        }
    }

    static VMMapAudit audit(String clusterId) {
        VMMapAudit audit = new VMMapAudit();
        audit.setMetadata(new ObjectMetaBuilder().withName("cluster").withGeneration(1L).withUid("u-1").build());
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId(clusterId);
        audit.setSpec(spec);
        return audit;
    }
}
