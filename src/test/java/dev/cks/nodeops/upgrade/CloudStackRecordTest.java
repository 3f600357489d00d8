package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.KubernetesSupportedVersion;
import org.junit.jupiter.api.Test;

class CloudStackRecordTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<KubernetesSupportedVersion> VERSIONS = List.of(
            version("v134", "1.34.2"), version("v135", "1.35.9"));

    @Test
    void namesTheClusterAndEachNodeCloudStackStillRecordsAtTheOldVersion() throws Exception {
        KubernetesCluster cluster = cluster("v134", "1.34.2", "1.35.9");

        assertThat(CloudStackRecord.staleness(cluster, VERSIONS, List.of("c-control-1", "c-node-1"), "v1.35.9")).hasValueSatisfying(message ->
                assertThat(message).startsWith("CloudStack still records Kubernetes 1.34.2 for CKS cluster c, 1.34.2 for node c-control-1, not v1.35.9")
                        .doesNotContain("c-node-1").contains("upgradeKubernetesCluster"));
    }

    @Test
    void saysNothingWhenCloudStacksRecordMatchesTheTarget() throws Exception {
        assertThat(CloudStackRecord.staleness(cluster("v135", "1.35.9", "1.35.9"), VERSIONS, List.of("c-control-1", "c-node-1"), "1.35.9")).isEmpty();
    }

    @Test
    void aServerWithoutPerNodeVersionsIsJudgedByTheClustersVersionOnly() throws Exception {
        // Before 4.20 the rows carry no kubernetesnodeversion.
        assertThat(CloudStackRecord.staleness(cluster("v135", null, null), VERSIONS, List.of("c-control-1", "c-node-1"), "1.35.9")).isEmpty();
        assertThat(CloudStackRecord.staleness(cluster("v134", null, null), VERSIONS, List.of("c-control-1"), "1.35.9")).isPresent();
    }

    /** Shape: a CKS cluster with autoscaling on; actor: cluster-autoscaler, whose scale-ups need no person. */
    @Test
    void withAutoscalingOnItSaysThatTheAutoscalersNodesJoinAtTheRecordedVersion() throws Exception {
        KubernetesCluster autoscaled = cluster("v134", "1.34.2", "1.34.2", "\"autoscalingenabled\": true, \"minsize\": 1, \"maxsize\": 5, ");

        assertThat(CloudStackRecord.staleness(autoscaled, VERSIONS, List.of("c-node-1"), "1.35.9")).hasValueSatisfying(message ->
                assertThat(message).endsWith("CKS autoscaling is on for c (1 to 5 workers): every node it adds joins at the recorded version, not 1.35.9, until then."));
        assertThat(CloudStackRecord.staleness(cluster("v134", "1.34.2", "1.34.2"), VERSIONS, List.of("c-node-1"), "1.35.9").orElseThrow())
                .doesNotContain("autoscaling");
    }

    private static KubernetesCluster cluster(String versionId, String controlRecord, String workerRecord) throws Exception {
        return cluster(versionId, controlRecord, workerRecord, "");
    }

    private static KubernetesCluster cluster(String versionId, String controlRecord, String workerRecord, String moreFields) throws Exception {
        return JSON.readValue("""
                {"id": "k1", "name": "c", %s"kubernetesversionid": "%s", "virtualmachines": [
                  {"id": "vm1", "name": "c-control-1"%s},
                  {"id": "vm2", "name": "c-node-1"%s}]}
                """.formatted(moreFields, versionId, recorded(controlRecord), recorded(workerRecord)), KubernetesCluster.class);
    }

    private static String recorded(String version) {
        return version == null ? "" : ", \"kubernetesnodeversion\": \"" + version + "\"";
    }

    private static KubernetesSupportedVersion version(String id, String semantic) {
        return new KubernetesSupportedVersion(id, semantic, semantic, "iso-" + id, null, "Ready", "Enabled", null, null, null, null, null, null);
    }
}
