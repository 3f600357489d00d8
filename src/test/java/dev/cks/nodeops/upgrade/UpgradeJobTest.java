package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.upgrade.UpgradeNodeStatus.Action;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;

class UpgradeJobTest {
    private static UpgradeJob.Request request(String attempt) {
        return new UpgradeJob.Request("cks-node-operator", "to-1-33", "uid-1", "prod-node-18c2f3a9b1", attempt, Action.Node, "v1.33.4",
                UpgradeJob.Runtime.image("busybox:1.37"), 900, "kubeadm-upgrade", "upgrade.sh", List.of("v1.33.4", "node"), "ab".repeat(32));
    }

    @Test
    void aPrivilegedPodPinnedToTheNodeInTheHostsNamespacesToleratingEveryTaint() {
        Job job = UpgradeJob.build(request(null));
        PodSpec pod = job.getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);

        assertThat(job.getMetadata().getNamespace()).isEqualTo("cks-node-operator");
        assertThat(pod.getNodeName()).isEqualTo("prod-node-18c2f3a9b1");
        assertThat(pod.getHostPID()).isTrue();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        assertThat(container.getSecurityContext().getPrivileged()).isTrue();
        assertThat(pod.getTolerations()).singleElement().satisfies(t -> {
            assertThat(t.getOperator()).isEqualTo("Exists");
            assertThat(t.getKey()).isNull();
            assertThat(t.getEffect()).as("every effect, NoExecute included").isNull();
        });
        assertThat(pod.getVolumes()).filteredOn(v -> v.getHostPath() != null).singleElement()
                .satisfies(v -> assertThat(v.getHostPath().getPath()).isEqualTo("/"));
        assertThat(container.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/host"));
        assertThat(pod.getVolumes()).filteredOn(v -> v.getConfigMap() != null).singleElement().satisfies(v -> {
            assertThat(v.getConfigMap().getName()).isEqualTo("kubeadm-upgrade");
            assertThat(v.getConfigMap().getItems().get(0).getKey()).isEqualTo("upgrade.sh");
        });
        assertThat(String.join(" ", container.getCommand())).contains("nsenter -t 1 -m -u -i -n -p -- /bin/sh /var/lib/cks-node-operator/")
                .endsWith("v1.33.4 node");
    }

    @Test
    void failsOnceWithinTheTimeoutIsKeptForADayAndIsLabelledForItsUpgradeAndNode() {
        Job job = UpgradeJob.build(request(null));

        assertThat(job.getSpec().getBackoffLimit()).isZero();
        assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(900L);
        assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(86400);
        assertThat(job.getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_NODEUPGRADE, "to-1-33")
                .containsEntry(UpgradeJob.LABEL_NODE, "prod-node-18c2f3a9b1");
        assertThat(job.getSpec().getTemplate().getMetadata().getLabels()).containsEntry(UpgradeJob.LABEL_NODE, "prod-node-18c2f3a9b1");
        assertThat(job.getMetadata().getAnnotations()).containsEntry(UpgradeJob.ANNOTATION_ACTION, "Node");
        assertThat(job.getMetadata().getAnnotations()).containsEntry(UpgradeJob.ANNOTATION_NODEUPGRADE, "to-1-33");
    }

    /**
     * Shape: any cluster. Actor: a GitOps tool pruning the NodeUpgrade with --cascade=foreground. The garbage
     * collector deletes every dependent of an owner deleted in the foreground, blocking or not: the Job carries
     * no owner reference, so no way of deleting its NodeUpgrade deletes it.
     */
    @Test
    void theJobHasNoOwnerReferenceSoNoDeletionOfItsNodeUpgradeReachesIt() {
        Job job = UpgradeJob.build(request(null));

        assertThat(job.getMetadata().getOwnerReferences()).isNullOrEmpty();
        assertThat(UpgradeJob.nodeUpgradeOf(job)).as("what wakes its NodeUpgrade").contains("to-1-33");
    }

    @Test
    void aJobMadeByAnEarlierOperatorIsTracedToItsNodeUpgradeByItsOwnerReference() {
        Job job = UpgradeJob.build(request(null));
        job.getMetadata().getAnnotations().remove(UpgradeJob.ANNOTATION_NODEUPGRADE);
        job.getMetadata().setOwnerReferences(java.util.List.of(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                .withApiVersion("nodeops.cks.dev/v1alpha1").withKind("NodeUpgrade").withName("to-1-32").withUid("uid-0").build()));

        assertThat(UpgradeJob.nodeUpgradeOf(job)).contains("to-1-32");
    }

    @Test
    void theNameIsDeterministicPerUpgradeNodeAndAttemptAndAValidName() {
        String name = UpgradeJob.build(request(null)).getMetadata().getName();

        assertThat(UpgradeJob.build(request(null)).getMetadata().getName()).isEqualTo(name);
        assertThat(UpgradeJob.build(request("1700000000")).getMetadata().getName()).isNotEqualTo(name);
        assertThat(name).startsWith("upgrade-prod-node-18c2f3a9b1-").matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?").hasSizeLessThanOrEqualTo(63);
        assertThat(UpgradeJob.name("u", "a-very-long-node-name-that-goes-on-and-on-and-on.example.internal", null))
                .matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?").hasSizeLessThanOrEqualTo(63);
    }

    @Test
    void thePodGetsNoServiceAccountTokenAndNoServiceEnvironment() {
        PodSpec pod = UpgradeJob.build(request(null)).getSpec().getTemplate().getSpec();

        assertThat(pod.getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getEnableServiceLinks()).isFalse();
    }

    /** Shape: an air-gapped site pulling the Job's image from its own registry, with a quota in the operator's namespace. */
    @Test
    void theJobsPodPullsWithTheConfiguredSecretsAndRequestsButNeverLimits() {
        UpgradeJob.Request configured = new UpgradeJob.Request("cks-node-operator", "to-1-33", "uid-1", "prod-node-18c2f3a9b1", null, Action.Node,
                "v1.33.4", new UpgradeJob.Runtime("registry.example/busybox@sha256:" + "ab".repeat(32), List.of("mirror"), java.util.Optional.of("100m"),
                        java.util.Optional.of("64Mi")), 900, "kubeadm-upgrade", "upgrade.sh", List.of("v1.33.4", "node"), "ab".repeat(32));
        PodSpec pod = UpgradeJob.build(configured).getSpec().getTemplate().getSpec();
        Container container = pod.getContainers().get(0);

        assertThat(pod.getImagePullSecrets()).extracting(secret -> secret.getName()).containsExactly("mirror");
        assertThat(container.getImage()).startsWith("registry.example/busybox@sha256:");
        assertThat(container.getResources().getRequests()).containsOnlyKeys("cpu", "memory");
        assertThat(container.getResources().getRequests().get("cpu").toString()).isEqualTo("100m");
        assertThat(container.getResources().getLimits()).as("a limit would kill kubeadm half-way").isNullOrEmpty();
        assertThat(UpgradeJob.build(request(null)).getSpec().getTemplate().getSpec().getImagePullSecrets()).isEmpty();
    }

    @Test
    void namesLongerThanALabelValueAreShortenedWithAHashSoTheyStayDistinct() {
        String longNode = "n".repeat(40) + "." + "zone-a.".repeat(20) + "example.internal";
        String otherLongNode = longNode.replace("zone-a", "zone-b");
        UpgradeJob.Request request = new UpgradeJob.Request("cks-node-operator", "u".repeat(200), "uid-1", longNode, null, Action.Node,
                "v1.33.4", UpgradeJob.Runtime.image("busybox:1.37"), 900, "kubeadm-upgrade", "upgrade.sh", List.of("v1.33.4", "node"), "ab".repeat(32));
        Job job = UpgradeJob.build(request);

        assertThat(job.getMetadata().getLabels().values()).allSatisfy(v -> assertThat(v).hasSizeLessThanOrEqualTo(63)
                .matches("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"));
        assertThat(job.getMetadata().getLabels().get(UpgradeJob.LABEL_NODE)).startsWith("nnnnn")
                .isNotEqualTo(UpgradeJob.labelValue(otherLongNode));
        assertThat(job.getSpec().getTemplate().getSpec().getNodeName()).as("the pod still goes to the full name").isEqualTo(longNode);
        assertThat(UpgradeJob.labelValue("prod-node-1")).isEqualTo("prod-node-1");
    }

    @Test
    void theScriptsDigestIsRecordedOnTheJobAndItsPod() {
        String digest = ScriptTrust.sha256("#!/bin/sh\n");
        Job job = UpgradeJob.build(withDigest(digest));

        assertThat(job.getMetadata().getAnnotations()).containsEntry(UpgradeJob.ANNOTATION_SCRIPT_SHA256, digest);
        assertThat(job.getSpec().getTemplate().getMetadata().getAnnotations()).containsEntry(UpgradeJob.ANNOTATION_SCRIPT_SHA256, digest);
        assertThat(String.join(" ", job.getSpec().getTemplate().getSpec().getContainers().get(0).getCommand())).contains(digest);
    }

    private static UpgradeJob.Request withDigest(String digest) {
        return new UpgradeJob.Request("cks-node-operator", "to-1-33", "uid-1", "prod-node-18c2f3a9b1", null, Action.Node, "v1.33.4",
                UpgradeJob.Runtime.image("busybox:1.37"), 900, "kubeadm-upgrade", "upgrade.sh", List.of("v1.33.4", "node"), digest);
    }

    @Test
    void outcomeFollowsTheJobsConditions() {
        Job running = new JobBuilder().withNewStatus().withActive(1).endStatus().build();
        Job complete = new JobBuilder().withNewStatus().addNewCondition().withType("Complete").withStatus("True").endCondition().endStatus().build();
        Job failed = new JobBuilder().withNewStatus().addNewCondition().withType("Failed").withStatus("True").withReason("DeadlineExceeded")
                .withMessage("Job was active longer than specified deadline").endCondition().endStatus().build();

        assertThat(UpgradeJob.outcome(new Job())).isEqualTo(new UpgradeJob.Running());
        assertThat(UpgradeJob.outcome(running)).isEqualTo(new UpgradeJob.Running());
        assertThat(UpgradeJob.outcome(complete)).isEqualTo(new UpgradeJob.Succeeded());
        assertThat(UpgradeJob.outcome(failed)).isEqualTo(new UpgradeJob.Failed("DeadlineExceeded", "Job was active longer than specified deadline"));
    }

    @Test
    void theFailureMessageKeepsTheReasonAndTheEndOfALongLogWithin2000Characters() {
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            log.append("line ").append(i).append(" of kubeadm output\n");
        }
        log.append("[ERROR] FATAL: the control plane is not healthy\n");

        String message = UpgradeJob.failureMessage("ns", "upgrade-x", "node-1",
                new UpgradeJob.Failed("BackoffLimitExceeded", "Job has reached the specified backoff limit"), log.toString());

        assertThat(message).hasSizeLessThanOrEqualTo(UpgradeJob.MAX_ERROR)
                .startsWith("The upgrade Job ns/upgrade-x on node node-1 failed (BackoffLimitExceeded: Job has reached the specified backoff limit).")
                .contains("Log tail:\n…")
                .endsWith("[ERROR] FATAL: the control plane is not healthy")
                .doesNotContain("line 0 of");
    }

    @Test
    void aShortOrMissingLogIsKeptWholeOrSaidToBeMissing() {
        UpgradeJob.Failed failed = new UpgradeJob.Failed("DeadlineExceeded", "Job was active longer than specified deadline");

        assertThat(UpgradeJob.failureMessage("ns", "j", "n", failed, "kubeadm: error\n")).endsWith("Log tail:\nkubeadm: error");
        assertThat(UpgradeJob.failureMessage("ns", "j", "n", failed, "")).endsWith("No log of its pod could be read.");
    }
}
