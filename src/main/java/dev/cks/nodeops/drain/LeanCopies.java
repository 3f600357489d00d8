package dev.cks.nodeops.drain;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Volume;

/**
 * What the drain's verdicts and the scheduling-aware prediction read of every pod and Node of a cluster-wide list,
 * made page by page as the list is read. A preflight or a DrainReport pass holds every pod of the cluster at once,
 * and at 10,000 pods the pods as listed (136 MiB of heap), or even with their managed fields and status dropped, did
 * not fit the chart's default heap of about 77 MiB. A copy keeps only the fields read, and the parts a workload's pods
 * have in common (labels, owner, containers, tolerations, affinity, the status) once per list instead of once per
 * pod: 8 MiB for those 10,000 (LeanCopiesBenchmark; docs/benchmarks.md, "DrainReport at 1,000 nodes"). One instance
 * per reading: what it holds is dropped with it.
 *
 * <p>Kept of a pod: name, namespace, uid, labels, annotations but kubectl's last-applied copy, owner references,
 * finalizers, the deletion time; the scheduling fields (node, selector, affinity, tolerations, spread, overhead); each
 * container's name, resources, ports and restart policy; the emptyDir volumes; the phase. The parts are treated as
 * values: nothing that reads a copy may change it.
 */
public final class LeanCopies {
    private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
    private final Map<Object, Object> shared = new HashMap<>();

    public Pod pod(Pod pod) {
        // Setters, not builders: a builder copies every list, map and nested object it is given, which would undo the sharing.
        ObjectMeta meta = pod.getMetadata();
        ObjectMeta leanMeta = new ObjectMeta();
        leanMeta.setName(meta.getName());
        leanMeta.setNamespace(once(meta.getNamespace()));
        leanMeta.setUid(meta.getUid());
        leanMeta.setLabels(once(meta.getLabels()));
        leanMeta.setAnnotations(once(withoutLastApplied(meta.getAnnotations())));
        leanMeta.setOwnerReferences(once(meta.getOwnerReferences()));
        leanMeta.setFinalizers(once(meta.getFinalizers()));
        leanMeta.setDeletionTimestamp(meta.getDeletionTimestamp());
        leanMeta.setDeletionGracePeriodSeconds(meta.getDeletionGracePeriodSeconds());
        leanMeta.setManagedFields(null);
        Pod lean = new Pod();
        lean.setMetadata(leanMeta);
        PodSpec spec = pod.getSpec();
        if (spec != null) {
            PodSpec leanSpec = new PodSpec();
            leanSpec.setNodeName(once(spec.getNodeName()));
            leanSpec.setNodeSelector(once(spec.getNodeSelector()));
            leanSpec.setAffinity(once(spec.getAffinity()));
            leanSpec.setTolerations(once(spec.getTolerations()));
            leanSpec.setTopologySpreadConstraints(once(spec.getTopologySpreadConstraints()));
            leanSpec.setOverhead(once(spec.getOverhead()));
            leanSpec.setContainers(once(containers(spec.getContainers())));
            leanSpec.setInitContainers(once(containers(spec.getInitContainers())));
            leanSpec.setVolumes(once(emptyDirs(spec.getVolumes())));
            // The model starts every list empty; these are never read, and a pass makes ten thousand specs.
            leanSpec.setEphemeralContainers(null);
            leanSpec.setHostAliases(null);
            leanSpec.setImagePullSecrets(null);
            leanSpec.setReadinessGates(null);
            leanSpec.setResourceClaims(null);
            leanSpec.setSchedulingGates(null);
            lean.setSpec(leanSpec);
        }
        if (pod.getStatus() != null) {
            PodStatus status = new PodStatus();
            status.setPhase(pod.getStatus().getPhase());
            // Equal for all pods in one phase: a handful of objects for the whole list.
            lean.setStatus(once(status));
        }
        return lean;
    }

    private static Map<String, String> withoutLastApplied(Map<String, String> annotations) {
        if (annotations == null || !annotations.containsKey(LAST_APPLIED)) {
            return annotations;
        }
        Map<String, String> rest = new HashMap<>(annotations);
        rest.remove(LAST_APPLIED);
        return rest;
    }

    /** A listed Node without what no verdict reads and can be most of it: the managed fields, kubectl's copy, the image list. */
    public static Node node(Node node) {
        node.getMetadata().setManagedFields(null);
        if (node.getMetadata().getAnnotations() != null) {
            node.getMetadata().getAnnotations().remove(LAST_APPLIED);
        }
        if (node.getStatus() != null) {
            node.getStatus().setImages(null);
        }
        return node;
    }

    private static List<Container> containers(List<Container> containers) {
        return containers == null ? null : containers.stream().map(container -> {
            Container lean = new Container();
            lean.setName(container.getName());
            lean.setResources(container.getResources());
            lean.setPorts(container.getPorts());
            lean.setRestartPolicy(container.getRestartPolicy());
            return lean;
        }).toList();
    }

    /** Only emptyDir volumes decide anything (local storage); a service account's projected volume is in nearly every pod. */
    private static List<Volume> emptyDirs(List<Volume> volumes) {
        return volumes == null ? null : volumes.stream().filter(v -> v.getEmptyDir() != null).map(v -> {
                    Volume lean = new Volume();
                    lean.setName(v.getName());
                    lean.setEmptyDir(v.getEmptyDir());
                    return lean;
                }).toList();
    }

    /** The first equal part seen in this reading: Fabric8's model objects, lists and maps compare by value. */
    @SuppressWarnings("unchecked")
    private <T> T once(T part) {
        return part == null ? null : (T) shared.computeIfAbsent(part, p -> p);
    }
}
