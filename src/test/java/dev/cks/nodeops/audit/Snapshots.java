package dev.cks.nodeops.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Set;

import dev.cks.nodeops.audit.ClusterView.MappedVm;

/** Builds snapshots for tests: a cluster "prod" whose VMs are all old enough unless a test says otherwise. */
final class Snapshots {
    static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    static final Instant LONG_AGO = NOW.minus(Duration.ofDays(3));
    static final Duration GRACE = Duration.ofMinutes(15);

    String clusterName = "prod";
    String clusterState = "Running";
    String clusterType = "CloudManaged";
    final List<MappedVm> map = new ArrayList<>();
    final List<OwnedVm> ownerVms = new ArrayList<>();
    final Set<String> otherMaps = new HashSet<>();
    final List<NodeView> nodes = new ArrayList<>();
    boolean nodesAvailable = true;
    Integer declaredVmCount;
    final Map<String, String> earlierMappedVms = new LinkedHashMap<>();
    Instant now = NOW;

    /** A mapped VM that CloudStack lists, with a Node of the same name. */
    Snapshots healthy(String id, String name) {
        return mapped(id, name, "Running").owned(id, name, "Running").node(name);
    }

    Snapshots mapped(String id, String name, String state) {
        map.add(new MappedVm(id, name, state));
        return this;
    }

    /** A Running, listed VM whose map row records one Kubernetes version while its Node's kubelet reports another. */
    Snapshots versioned(String id, String name, String recordedVersion, String kubeletVersion) {
        map.add(new MappedVm(id, name, "Running", recordedVersion));
        owned(id, name, "Running");
        nodes.add(new NodeView(name, LONG_AGO, kubeletVersion));
        return this;
    }

    Snapshots owned(String id, String name, String state) {
        return owned(id, name, state, LONG_AGO, null);
    }

    Snapshots owned(String id, String name, String state, Instant created, Instant lastStateChange) {
        ownerVms.add(new OwnedVm(id, name, state, created, lastStateChange));
        return this;
    }

    Snapshots node(String name) {
        return node(name, LONG_AGO);
    }

    Snapshots node(String name, Instant created) {
        nodes.add(new NodeView(name, created));
        return this;
    }

    Snapshots otherClusterMaps(String id) {
        otherMaps.add(id);
        return this;
    }

    Snapshots nodesUnavailable() {
        nodesAvailable = false;
        return this;
    }

    ClusterView cluster() {
        return new ClusterView("c-1", clusterName, clusterState, clusterType, map, null, declaredVmCount);
    }

    AuditSnapshot build() {
        return new AuditSnapshot(cluster(), ownerVms, otherMaps,
                nodesAvailable ? ClusterNodes.of(nodes) : ClusterNodes.unavailable("the Node informer has not synced"),
                now, GRACE, earlierMappedVms);
    }

    List<Drift> check() {
        return VmMapChecker.check(build());
    }
}
