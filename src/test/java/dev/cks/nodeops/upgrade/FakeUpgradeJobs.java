package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;

/** Upgrade Jobs in memory: created Jobs run (their pod ready) until the test finishes them. */
final class FakeUpgradeJobs implements UpgradeJobs {
    final Map<String, Job> jobs = new LinkedHashMap<>();
    final List<String> created = new ArrayList<>();
    /** ConfigMaps of the operator's namespace by name: where the Script executor's scripts are. */
    final Map<String, Map<String, String>> configMaps = new LinkedHashMap<>();
    final Map<String, String> scripts = new LinkedHashMap<>();
    String log = "kubeadm: [upgrade/apply] FATAL: the control plane did not come up";
    /** The Jobs whose log the operator read, in order. */
    final List<String> logsRead = new ArrayList<>();

    @Override
    public Optional<Job> find(String namespace, String name) {
        return Optional.ofNullable(jobs.get(name));
    }

    @Override
    public void create(Job job) {
        created.add(job.getMetadata().getName());
        if (podsRun) {
            job.setStatus(new JobStatusBuilder().withActive(1).withReady(1).build());
        }
        jobs.putIfAbsent(job.getMetadata().getName(), job);
    }

    /** Whether the pods of the Jobs created from now on run; when not, {@link #pods} are those of the Job. */
    boolean podsRun = true;
    final Map<String, List<Pod>> pods = new LinkedHashMap<>();
    final Map<String, String> failedCreate = new LinkedHashMap<>();

    @Override
    public List<Pod> pods(String namespace, String jobName) {
        return pods.getOrDefault(jobName, List.of());
    }

    @Override
    public Optional<String> failedCreate(String namespace, String jobName) {
        return Optional.ofNullable(failedCreate.get(jobName));
    }

    /** What the API server would say to the next Jobs' dry runs; empty: admitted. */
    Optional<String> refusal = Optional.empty();
    final List<String> dryRuns = new ArrayList<>();

    @Override
    public Optional<String> refusal(Job job) {
        dryRuns.add(job.getMetadata().getName());
        return refusal;
    }

    @Override
    public List<Job> onNode(String namespace, String node) {
        return jobs.values().stream().filter(j -> UpgradeJob.labelValue(node).equals(j.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE))).toList();
    }

    @Override
    public void orphan(String namespace, String name) {
        Optional.ofNullable(jobs.get(name)).ifPresent(job -> job.getMetadata().setOwnerReferences(new ArrayList<>()));
    }

    @Override
    public void delete(String namespace, String name) {
        jobs.remove(name);
    }

    /** What the ISO canary's Jobs print: a good ISO unless a test says otherwise. */
    String canaryLog = "iso-canary: ok kubeadm: k8s/kubeadm is v1.35.4\niso-canary: ok images: archives for kube-apiserver:v1.35.4\n"
            + "iso-canary: verdict passed\n";
    /** The k8s-app labels of the addons the cluster runs (kube-system pods). */
    final java.util.Set<String> addons = new java.util.HashSet<>(java.util.Set.of("kube-dns", "kube-proxy"));

    @Override
    public String logTail(String namespace, String jobName) {
        logsRead.add(jobName);
        Job job = jobs.get(jobName);
        return job != null && job.getMetadata().getLabels().containsKey(UpgradeJob.LABEL_ISO_CANARY) ? canaryLog : log;
    }

    @Override
    public boolean anyPod(String namespace, String labelKey, String labelValue) {
        return "kube-system".equals(namespace) && "k8s-app".equals(labelKey) && addons.contains(labelValue);
    }

    /** The ISO canary's Jobs, in the order they were made. */
    List<Job> canaryJobs() {
        return jobs.values().stream().filter(j -> j.getMetadata().getLabels().containsKey(UpgradeJob.LABEL_ISO_CANARY)).toList();
    }

    /** Every canary Job still running ends (succeeded: the script reached a verdict, which its log says). */
    void finishCanaries() {
        canaryJobs().stream().filter(job -> UpgradeJob.outcome(job) instanceof UpgradeJob.Running).forEach(job -> job.setStatus(
                new JobStatusBuilder().withConditions(new JobConditionBuilder().withType("Complete").withStatus("True").build()).build()));
    }

    @Override
    public Optional<Map<String, String>> configMapData(String namespace, String name) {
        return Optional.ofNullable(configMaps.get(name));
    }

    @Override
    public void writeScripts(String namespace, String configMap, Map<String, String> content) {
        content.forEach((key, script) -> scripts.put(configMap + "/" + key, script));
    }

    /** The Job of this node (the only one, or the newest) ends. */
    Job finish(String node, boolean succeeded) {
        Job job = jobOf(node);
        job.setStatus(new JobStatusBuilder().withConditions(new JobConditionBuilder().withType(succeeded ? "Complete" : "Failed")
                .withStatus("True").withReason(succeeded ? null : "BackoffLimitExceeded").withMessage(succeeded ? null : "Job has reached the specified backoff limit")
                .build()).build());
        return job;
    }

    Job jobOf(String node) {
        return jobs.values().stream().filter(j -> node.equals(j.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE)))
                .reduce((first, second) -> second).orElseThrow(() -> new AssertionError("no Job for node " + node + " among " + jobs.keySet()));
    }

    boolean hasJob(String node) {
        return jobs.values().stream().anyMatch(j -> node.equals(j.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE)));
    }

    List<String> nodesWithJobs() {
        return jobs.values().stream().map(j -> j.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE)).filter(java.util.Objects::nonNull).toList();
    }
}
