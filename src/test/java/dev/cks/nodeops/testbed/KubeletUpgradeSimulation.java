package dev.cks.nodeops.testbed;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.cks.nodeops.upgrade.UpgradeJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;

/**
 * Plays the node's side of an upgrade on the KWOK bed, where no script really runs: when an upgrade
 * Job succeeds (KWOK completes pods owned by Jobs), the node "restarts its kubelet" at the Job's target
 * version: its status reports that version with Ready=False, and KWOK sets Ready back to True a moment
 * later. The operator (not this class) must see that and wait for Ready. Also records every upgrade
 * Job it sees, in the order they appear.
 */
public final class KubeletUpgradeSimulation implements AutoCloseable {
    public record SeenJob(String name, String node, String action, String nodeUpgrade) {
    }

    private final KubernetesClient client;
    private final List<SeenJob> seen = new CopyOnWriteArrayList<>();
    private final Set<String> upgraded = ConcurrentHashMap.newKeySet();
    /** Nodes whose kubelet does not come back at the new version until released, with the Job that upgraded each. */
    private final Map<String, Job> held = new ConcurrentHashMap<>();
    private final Set<String> holding = ConcurrentHashMap.newKeySet();
    private final SharedIndexInformer<Job> informer;

    public KubeletUpgradeSimulation(KubernetesClient client, String namespace) {
        this.client = client;
        this.informer = client.batch().v1().jobs().inNamespace(namespace).withLabel(UpgradeJob.LABEL_NODEUPGRADE).inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Job job) {
                Map<String, String> labels = job.getMetadata().getLabels();
                if (labels.get(UpgradeJob.LABEL_NODE) == null) {
                    return; // the ISO canary's Job: no upgrade
                }
                seen.add(new SeenJob(job.getMetadata().getName(), labels.get(UpgradeJob.LABEL_NODE),
                        job.getMetadata().getAnnotations().get(UpgradeJob.ANNOTATION_ACTION), labels.get(UpgradeJob.LABEL_NODEUPGRADE)));
                upgradeWhenDone(job);
            }

            @Override
            public void onUpdate(Job before, Job job) {
                upgradeWhenDone(job);
            }

            @Override
            public void onDelete(Job job, boolean finalStateUnknown) {
            }
        });
    }

    /** The node's kubelet stays at its old version after its Job succeeds (the NodeUpgrade waits for Ready) until {@link #release}. */
    public void hold(String node) {
        holding.add(node);
    }

    /** A held node's kubelet comes back at the version its Job upgraded it to. */
    public void release(String node) {
        holding.remove(node);
        Job job = held.remove(node);
        if (job != null) {
            comeBack(job);
        }
    }

    private void upgradeWhenDone(Job job) {
        // The ISO canary's Job (no node label) only reads the ISO: no kubelet restarts after it.
        if (job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE) == null) {
            return;
        }
        if (UpgradeJob.outcome(job) instanceof UpgradeJob.Succeeded && upgraded.add(job.getMetadata().getName())) {
            String node = job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE);
            if (holding.contains(node)) {
                held.put(node, job);
                return;
            }
            comeBack(job);
        }
    }

    private void comeBack(Job job) {
        restartAt(client, job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE), job.getMetadata().getAnnotations().get(UpgradeJob.ANNOTATION_TARGET));
    }

    /**
     * The node's kubelet restarts at this version: it reports the version with Ready=False, and KWOK sets Ready back to
     * True a moment later (an upgraded kubelet coming back, or a node reinstalled from an older image).
     */
    public static void restartAt(KubernetesClient client, String node, String version) {
        client.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\":{\"nodeInfo\":{\"kubeletVersion\":\"" + version + "\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
                        + "\"reason\":\"KubeletNotReady\",\"message\":\"kubelet restarting after an upgrade\","
                        + "\"lastHeartbeatTime\":\"2026-01-01T00:00:00Z\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}");
    }

    /** Upgrade Jobs seen for these nodes, in the order they were created. */
    public List<SeenJob> jobsOn(List<String> nodes) {
        return seen.stream().filter(j -> nodes.contains(j.node())).toList();
    }

    @Override
    public void close() {
        informer.close();
    }
}
