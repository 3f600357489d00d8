package dev.cks.nodeops.upgrade;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;

/** The upgrade Jobs and their script, behind a port: on the API server here, a fake in the reconciler's unit tests. */
interface UpgradeJobs {
    Optional<Job> find(String namespace, String name);

    /** Creates the Job; one that exists already (created by a run that stopped before recording it) is left as it is. */
    void create(Job job);

    /** The upgrade Jobs of a node (by its label), whoever made them and under whatever name. */
    List<Job> onNode(String namespace, String node);

    /**
     * Takes the Job's owner reference away, so that deleting its NodeUpgrade does not make the garbage
     * collector delete it (and kill kubeadm half-way); a Job that is gone is left so. Only Jobs made by an
     * operator before this one carry an owner reference (see {@link UpgradeJob#build}).
     */
    void orphan(String namespace, String name);

    /** Deletes a finished Job and its pods; one that is gone is left so. */
    void delete(String namespace, String name);

    /**
     * Why the API server would refuse this Job or its pod (a server-side dry run of both: admission,
     * Pod Security, quotas, validation); empty when both would be admitted.
     */
    Optional<String> refusal(Job job);

    /** The end of the log of the Job's newest pod; empty when there is none or it cannot be read. */
    String logTail(String namespace, String jobName);

    /** The Job's pods (by the label the Job controller gives them). */
    List<Pod> pods(String namespace, String jobName);

    /** The message of the Job controller's latest FailedCreate event for the Job: why it could not make its pod. */
    Optional<String> failedCreate(String namespace, String jobName);

    /** The data of a ConfigMap in the operator's namespace; empty when it does not exist. */
    Optional<Map<String, String>> configMapData(String namespace, String name);

    /** Writes the scripts' ConfigMap (every key of it), so it always matches the running operator. */
    void writeScripts(String namespace, String configMap, Map<String, String> scripts);

    /** Whether any pod in the namespace carries the label: whether the cluster runs an addon. */
    boolean anyPod(String namespace, String labelKey, String labelValue);

    static UpgradeJobs on(KubernetesClient client) {
        return new OnApiServer(client);
    }

    final class OnApiServer implements UpgradeJobs {
        private static final Logger LOG = Logger.getLogger(UpgradeJobs.class);
        private static final int LOG_LINES = 60;
        /** Set by the Job controller on every pod of a Job. */
        private static final String JOB_NAME_LABEL = "job-name";
        private final KubernetesClient client;

        OnApiServer(KubernetesClient client) {
            this.client = client;
        }

        @Override
        public Optional<Job> find(String namespace, String name) {
            return Optional.ofNullable(client.batch().v1().jobs().inNamespace(namespace).withName(name).get());
        }

        @Override
        public void create(Job job) {
            try {
                client.batch().v1().jobs().inNamespace(job.getMetadata().getNamespace()).resource(job).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }

        @Override
        public List<Job> onNode(String namespace, String node) {
            return client.batch().v1().jobs().inNamespace(namespace).withLabel(UpgradeJob.LABEL_NODE, UpgradeJob.labelValue(node)).list().getItems();
        }

        @Override
        public void orphan(String namespace, String name) {
            try {
                client.batch().v1().jobs().inNamespace(namespace).withName(name)
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"ownerReferences\":null}}");
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    throw e;
                }
            }
        }

        @Override
        public void delete(String namespace, String name) {
            client.batch().v1().jobs().inNamespace(namespace).withName(name).withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
        }

        @Override
        public Optional<String> refusal(Job job) {
            String namespace = job.getMetadata().getNamespace();
            Pod pod = new PodBuilder().withMetadata(new ObjectMetaBuilder().withName(job.getMetadata().getName()).withNamespace(namespace)
                    .withLabels(job.getSpec().getTemplate().getMetadata().getLabels())
                    .withAnnotations(job.getSpec().getTemplate().getMetadata().getAnnotations()).build())
                    .withSpec(job.getSpec().getTemplate().getSpec()).build();
            try {
                client.batch().v1().jobs().inNamespace(namespace).resource(job).dryRun().create();
                // Pod Security is enforced on pods, not on the Job that makes them: only the pod's dry run asks it.
                client.pods().inNamespace(namespace).resource(pod).dryRun().create();
                return Optional.empty();
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409) {
                    // The Job exists already: made by a run that stopped before recording it, so it was admitted.
                    return Optional.empty();
                }
                if (e.getCode() < 400 || e.getCode() >= 500) {
                    // No answer, or a server error: it may pass, the step is retried.
                    throw e;
                }
                return Optional.of(e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage());
            }
        }

        @Override
        public String logTail(String namespace, String jobName) {
            try {
                Optional<Pod> newest = pods(namespace, jobName).stream().max(Comparator.comparing(p -> p.getMetadata().getCreationTimestamp()));
                if (newest.isEmpty()) {
                    return "";
                }
                String log = client.pods().inNamespace(namespace).withName(newest.get().getMetadata().getName()).tailingLines(LOG_LINES).getLog();
                return log == null ? "" : log;
            } catch (KubernetesClientException e) {
                // The Job's own reason still says why it failed.
                LOG.debugf("no log for Job %s/%s: %s", namespace, jobName, e.getMessage());
                return "";
            }
        }

        @Override
        public List<Pod> pods(String namespace, String jobName) {
            return client.pods().inNamespace(namespace).withLabel(JOB_NAME_LABEL, jobName).list().getItems();
        }

        @Override
        public Optional<String> failedCreate(String namespace, String jobName) {
            return client.v1().events().inNamespace(namespace)
                    .withFields(Map.of("involvedObject.kind", "Job", "involvedObject.name", jobName, "reason", "FailedCreate")).list().getItems()
                    .stream().max(Comparator.comparing(OnApiServer::lastSeen)).map(Event::getMessage);
        }

        /** Events of a series carry the last time in lastTimestamp; events.k8s.io writers only eventTime. */
        private static String lastSeen(Event event) {
            String last = event.getLastTimestamp() != null ? event.getLastTimestamp()
                    : event.getEventTime() != null ? event.getEventTime().getTime() : event.getMetadata().getCreationTimestamp();
            return last == null ? "" : last;
        }

        @Override
        public Optional<Map<String, String>> configMapData(String namespace, String name) {
            return Optional.ofNullable(client.configMaps().inNamespace(namespace).withName(name).get())
                    .map(configMap -> configMap.getData() == null ? Map.<String, String>of() : configMap.getData());
        }

        @Override
        public void writeScripts(String namespace, String configMap, Map<String, String> scripts) {
            client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder()
                    .withNewMetadata().withName(configMap).withNamespace(namespace)
                    .addToLabels("app.kubernetes.io/managed-by", "cks-node-operator").endMetadata()
                    .addToData(scripts)
                    .build()).createOr(existing -> existing.update());
        }

        @Override
        public boolean anyPod(String namespace, String labelKey, String labelValue) {
            return !client.pods().inNamespace(namespace).withLabel(labelKey, labelValue)
                    .list(new ListOptionsBuilder().withLimit(1L).build()).getItems().isEmpty();
        }
    }
}
