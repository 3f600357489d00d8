package dev.cks.nodeops.audit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
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

    /** A clock tests move by hand. */
    static final class MovingClock extends Clock {
        private Instant now;

        MovingClock(Instant start) {
            this.now = start;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /** CloudStack as the audit sees it; queued cluster readings are answered first, to simulate change during a run. */
    static final class FakeCloudStack implements AuditSource {
        ClusterView cluster;
        final Deque<Optional<ClusterView>> queuedReadings = new ArrayDeque<>();
        List<OwnedVm> ownerVms = new ArrayList<>();
        Set<String> otherMaps = new HashSet<>();
        AuditSourceException failure;
        final List<String> calls = new ArrayList<>();

        @Override
        public Optional<ClusterView> cluster(String clusterId) {
            calls.add("cluster " + clusterId);
            failIfAsked();
            if (!queuedReadings.isEmpty()) {
                return queuedReadings.poll();
            }
            return Optional.ofNullable(cluster).filter(c -> c.id().equals(clusterId));
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

    record RecordedEvent(String type, String reason, String message) {
    }

    static final class RecordingEvents implements AuditEvents {
        final List<RecordedEvent> events = new ArrayList<>();

        @Override
        public void warning(VMMapAudit audit, String reason, String message) {
            events.add(new RecordedEvent("Warning", reason, message));
        }

        @Override
        public void normal(VMMapAudit audit, String reason, String message) {
            events.add(new RecordedEvent("Normal", reason, message));
        }

        List<RecordedEvent> drain() {
            List<RecordedEvent> copy = List.copyOf(events);
            events.clear();
            return copy;
        }
    }

    static final class Settings implements AuditSettings {
        boolean enabled = true;
        String clusterId;

        @Override
        public boolean enabled() {
            return enabled;
        }

        @Override
        public Optional<String> clusterId() {
            return Optional.ofNullable(clusterId);
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
