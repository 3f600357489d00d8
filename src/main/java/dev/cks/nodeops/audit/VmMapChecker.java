package dev.cks.nodeops.audit;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.audit.VmMapFinding.Type;
import dev.cks.nodeops.nodes.VersionMatch;

/**
 * Compares the three views of a cluster (CloudStack's VM map, the owner's VMs, the Nodes) and says
 * what differs. Pure: the same snapshot always gives the same findings, in the same order.
 *
 * <p>A mapped VM that is Stopped (or Starting, Stopping, Migrating) is not reported: its map entry
 * is right, and a stopped VM without a Ready Node is what a user who stopped it expects; reporting
 * it would train users to ignore the audit. Only Running VMs are expected to be Nodes.
 */
public final class VmMapChecker {
    private VmMapChecker() {
    }

    public static List<Drift> check(AuditSnapshot snapshot) {
        ClusterView cluster = snapshot.cluster();
        CksNodeNames names = CksNodeNames.of(cluster.name(), cluster.id());
        Map<String, OwnedVm> ownerVmsById = new HashMap<>(snapshot.ownerVms().size() * 2);
        snapshot.ownerVms().forEach(vm -> ownerVmsById.putIfAbsent(vm.id(), vm));
        Map<String, MappedVm> mapRows = distinctRows(cluster.map());
        List<Drift> drifts = new ArrayList<>();
        int uncounted = restoreVanishedRows(mapRows, ownerVmsById, snapshot);
        if (uncounted > 0) {
            drifts.add(new Drift(Type.MappedVmMissing, Drift.MAP_COUNT_KEY, null, null, null, "Cluster " + cluster.name()
                    + " counts " + cluster.declaredVmCount() + " VMs, but " + uncounted + (uncounted == 1 ? " of them is" : " of them are")
                    + " in neither its VM map nor any VM list; probably expunged while still in the cluster."));
        }

        // Lower-cased names of the VMs a Node may legitimately be: mapped ones and unmapped ones named as ours.
        Set<String> clusterVmNames = new HashSet<>();
        for (MappedVm row : mapRows.values()) {
            OwnedVm vm = ownerVmsById.get(row.id());
            String name = vm != null ? vm.name() : row.name();
            if (name != null) {
                clusterVmNames.add(name.toLowerCase(Locale.ROOT));
            }
            mappedVmDrift(row, vm).ifPresent(drifts::add);
        }
        for (OwnedVm vm : snapshot.ownerVms()) {
            if (mapRows.containsKey(vm.id()) || names.roleOf(vm.name()).isEmpty() || VmStates.isGone(vm.state())) {
                continue;
            }
            clusterVmNames.add(vm.name().toLowerCase(Locale.ROOT));
            if (!snapshot.otherClustersMappedIds().contains(vm.id()) && pastGrace(vm.created(), snapshot)) {
                drifts.add(new Drift(Type.UnmappedVm, Drift.unmappedVmKey(vm.id()), vm.id(), vm.name(), null,
                        describe(vm.name(), vm.id()) + " is named as a node of cluster " + cluster.name()
                                + " but is in no cluster's VM map."));
            }
        }
        if (snapshot.nodes().available()) {
            Map<String, NodeView> nodesByVmName = new HashMap<>();
            for (NodeView node : snapshot.nodes().nodes()) {
                Optional<String> vmName = matchingVmName(node.name(), clusterVmNames);
                if (vmName.isPresent()) {
                    nodesByVmName.putIfAbsent(vmName.get(), node);
                } else if (pastGrace(node.created(), snapshot)) {
                    drifts.add(new Drift(Type.NodeWithoutVm, Drift.nodeKey(node.name()), null, null, node.name(),
                            "Node " + node.name() + " matches no VM of cluster " + cluster.name() + "."));
                }
            }
            for (MappedVm row : mapRows.values()) {
                notANodeDrift(row, ownerVmsById.get(row.id()), names, nodesByVmName.keySet(), snapshot).ifPresent(drifts::add);
                String name = ownerVmsById.containsKey(row.id()) ? ownerVmsById.get(row.id()).name() : row.name();
                NodeView node = name == null ? null : nodesByVmName.get(name.toLowerCase(Locale.ROOT));
                versionRecordDrift(row, name, node).ifPresent(drifts::add);
            }
        }
        return drifts;
    }

    /**
     * CloudStack records a version per node (kubernetes_node_version, 4.20+) and updates it only when
     * its own upgrade has checked the node; after any other upgrade the record is stale, and CloudStack's
     * next upgrade, scale-up or reconcile works from it. Compared only when both sides are known.
     */
    private static Optional<Drift> versionRecordDrift(MappedVm row, String vmName, NodeView node) {
        if (node == null || row.recordedVersion() == null || node.kubeletVersion() == null
                || VersionMatch.matches(node.kubeletVersion(), row.recordedVersion())) {
            return Optional.empty();
        }
        return Optional.of(new Drift(Type.VersionRecordStale, Drift.versionKey(row.id()), row.id(), vmName, node.name(),
                "Node " + node.name() + " runs Kubernetes " + node.kubeletVersion() + ", but CloudStack records "
                        + row.recordedVersion() + " for " + describe(vmName, row.id()) + "; CloudStack's own upgrades and scale-ups "
                        + "start from that record, so a scale-up joins nodes at " + row.recordedVersion() + " (see docs/upgrade.md, \"CloudStack's record\"; "
                        + "a NodeUpgrade with spec.mode Continuous upgrades such nodes as they join, docs/continuous.md)."));
    }

    /**
     * CloudStack's cluster answer leaves out mapped VMs that were expunged, yet still counts them in
     * size and control nodes. Such a VM we reported before is put back as a bare row, so its finding
     * keeps its identity (destroyed, then expunged, then gone) instead of looking fixed. Returns how
     * many counted VMs remain unexplained.
     */
    private static int restoreVanishedRows(Map<String, MappedVm> mapRows, Map<String, OwnedVm> ownerVmsById,
            AuditSnapshot snapshot) {
        Integer declared = snapshot.cluster().declaredVmCount();
        if (declared == null || declared <= mapRows.size()) {
            return 0;
        }
        int deficit = declared - mapRows.size();
        for (Map.Entry<String, String> earlier : snapshot.earlierMappedVms().entrySet()) {
            if (deficit == 0) {
                break;
            }
            if (!mapRows.containsKey(earlier.getKey()) && !ownerVmsById.containsKey(earlier.getKey())) {
                mapRows.put(earlier.getKey(), new MappedVm(earlier.getKey(), earlier.getValue(), null));
                deficit--;
            }
        }
        return deficit;
    }

    /** The map may list a VM twice (virtualmachines and virtualmachineids, or a server bug); keep the most telling row. */
    private static Map<String, MappedVm> distinctRows(List<MappedVm> map) {
        Map<String, MappedVm> rows = new LinkedHashMap<>();
        for (MappedVm row : map) {
            rows.merge(row.id(), row, (kept, other) -> kept.name() == null && kept.state() == null ? other : kept);
        }
        return rows;
    }

    /**
     * The owner's VM list is the fresher view; the map's embedded row only speaks when the VM is not
     * listed (CloudStack omits destroyed VMs from some callers' lists). A bare id that no list knows is
     * a VM that no longer exists.
     */
    private static Optional<Drift> mappedVmDrift(MappedVm row, OwnedVm vm) {
        String name = vm != null ? vm.name() : row.name();
        String state = vm != null ? vm.state() : row.state();
        String key = Drift.mappedVmKey(row.id());
        String who = describe(name, row.id());
        if (state == null) {
            return Optional.of(new Drift(Type.MappedVmMissing, key, row.id(), name, null,
                    who + " is in the cluster's map but CloudStack lists no such VM."));
        }
        if (VmStates.EXPUNGED.equalsIgnoreCase(state)) {
            return Optional.of(new Drift(Type.MappedVmExpunged, key, row.id(), name, null,
                    who + " is in the cluster's map but Expunged."));
        }
        if (VmStates.isGone(state)) {
            return Optional.of(new Drift(Type.MappedVmDestroyed, key, row.id(), name, null,
                    who + " is in the cluster's map but " + state + "."));
        }
        if (VmStates.ERROR.equalsIgnoreCase(state)) {
            return Optional.of(new Drift(Type.MappedVmError, key, row.id(), name, null,
                    who + " is in the cluster's map but in state Error."));
        }
        return Optional.empty();
    }

    private static Optional<Drift> notANodeDrift(MappedVm row, OwnedVm vm, CksNodeNames names,
            Set<String> vmNamesWithNode, AuditSnapshot snapshot) {
        String name = vm != null ? vm.name() : row.name();
        String state = vm != null ? vm.state() : row.state();
        if (name == null || !VmStates.RUNNING.equalsIgnoreCase(state)
                || vmNamesWithNode.contains(name.toLowerCase(Locale.ROOT))) {
            return Optional.empty();
        }
        // etcd VMs of an external etcd never register as Nodes.
        if (names.roleOf(name).filter(role -> role == CksNodeNames.Role.ETCD).isPresent()) {
            return Optional.empty();
        }
        Instant lastChange = vm == null ? null : latest(vm.created(), vm.lastStateChange());
        if (!pastGrace(lastChange, snapshot)) {
            return Optional.empty();
        }
        return Optional.of(new Drift(Type.VmNotANode, Drift.notANodeKey(row.id()), row.id(), name, null,
                describe(name, row.id()) + " is Running and in the cluster's map but no Node has its name."));
    }

    /** A Node is named by its VM's host name or by the VM's FQDN (kubelet with --hostname-override or cloud-init FQDNs). */
    private static Optional<String> matchingVmName(String nodeName, Set<String> clusterVmNames) {
        String lower = nodeName.toLowerCase(Locale.ROOT);
        if (clusterVmNames.contains(lower)) {
            return Optional.of(lower);
        }
        int dot = lower.indexOf('.');
        if (dot > 0 && clusterVmNames.contains(lower.substring(0, dot))) {
            return Optional.of(lower.substring(0, dot));
        }
        return Optional.empty();
    }

    /** An unknown time counts as old: CloudStack always sends {@code created}, so unknown means long ago or a bare row. */
    private static boolean pastGrace(Instant since, AuditSnapshot snapshot) {
        Duration grace = snapshot.gracePeriod();
        return since == null || !since.plus(grace).isAfter(snapshot.now());
    }

    private static Instant latest(Instant a, Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || a.isAfter(b) ? a : b;
    }

    static String describe(String vmName, String vmId) {
        return vmName == null || vmName.isBlank() ? "VM " + vmId : "VM " + vmName + " (" + vmId + ")";
    }
}
