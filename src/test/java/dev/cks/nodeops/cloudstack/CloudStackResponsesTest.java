package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ApiError;
import dev.cks.nodeops.cloudstack.CloudStackResponses.ListPage;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CloudStackResponsesTest {

    private static final List<String> RECORDED_FILES = List.of(
            "cloudstack-go-testdata/AsyncJobService.json",
            "cloudstack-go-testdata/KubernetesService.json",
            "cloudstack-go-testdata/VirtualMachineService.json",
            "cloudstack-go-testdata/extracted/createKubernetesCluster.asyncJobResult.json",
            "cloudstack-go-testdata/extracted/listAsyncJobs.json",
            "cloudstack-go-testdata/extracted/listKubernetesClusters.json",
            "cloudstack-go-testdata/extracted/listKubernetesSupportedVersions.json",
            "cloudstack-go-testdata/extracted/listVirtualMachines.json",
            "cloudstack-go-testdata/extracted/stopVirtualMachine.asyncJobResult.json");

    static JsonNode resource(String path) throws IOException {
        try (InputStream in = CloudStackResponsesTest.class.getResourceAsStream("/cloudstack-reference/" + path)) {
            assertThat(in).as(path).isNotNull();
            return CloudStackResponses.MAPPER.readTree(in);
        }
    }

    /** Every answer in the recorded files: objects keyed "...response" (plus cloudstack-go's one mis-keyed fixture). */
    static Stream<Arguments> recordedAnswers() throws IOException {
        List<Arguments> answers = new ArrayList<>();
        for (String file : RECORDED_FILES) {
            collect(file, resource(file), answers);
        }
        return answers.stream();
    }

    private static void collect(String file, JsonNode node, List<Arguments> answers) {
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> field = it.next();
            if (!field.getValue().isObject()) {
                continue;
            }
            if (field.getKey().endsWith("response") || field.getKey().equals("listVirtualMachines")
                    && field.getValue().has("virtualmachine")) {
                answers.add(Arguments.of(file + " " + field.getKey(), field.getValue()));
            } else {
                collect(file, field.getValue(), answers);
            }
        }
    }

    @Test
    void findsEveryRecordedAnswer() throws IOException {
        assertThat(recordedAnswers()).hasSizeGreaterThanOrEqualTo(20);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("recordedAnswers")
    void parsesEveryRecordedAnswerIntoTheModels(String name, JsonNode envelope) {
        assertThat(CloudStackResponses.error(envelope)).isEmpty();
        int parsed = 0;
        if (envelope.has("kubernetescluster") && envelope.get("kubernetescluster").isArray()) {
            ListPage<KubernetesCluster> page = CloudStackResponses.listPage(envelope, "kubernetescluster", KubernetesCluster.class);
            assertThat(page.items()).hasSize((int) page.count()).allSatisfy(c -> assertThat(c.id()).isNotBlank());
            parsed++;
        }
        if (envelope.has("virtualmachine") && envelope.get("virtualmachine").isArray()) {
            ListPage<VirtualMachine> page = CloudStackResponses.listPage(envelope, "virtualmachine", VirtualMachine.class);
            assertThat(page.items()).hasSize((int) page.count()).allSatisfy(vm -> assertThat(vm.id()).isNotBlank());
            parsed++;
        }
        if (envelope.has("kubernetessupportedversion") && envelope.get("kubernetessupportedversion").isArray()) {
            var page = CloudStackResponses.listPage(envelope, "kubernetessupportedversion", KubernetesSupportedVersion.class);
            assertThat(page.items()).hasSize((int) page.count()).allSatisfy(v -> assertThat(v.isoId()).isNotBlank());
            parsed++;
        }
        if (envelope.has("kubernetessupportedversion") && envelope.get("kubernetessupportedversion").isObject()) {
            var version = CloudStackResponses.MAPPER.convertValue(envelope.get("kubernetessupportedversion"),
                    KubernetesSupportedVersion.class);
            assertThat(version.semanticVersion()).isNotBlank();
            parsed++;
        }
        if (envelope.has("asyncjobs")) {
            assertThat(envelope.get("asyncjobs")).isNotEmpty();
            parsed++;
        }
        if (envelope.has("jobstatus")) {
            AsyncJobResult job = CloudStackResponses.asyncJobResult(envelope);
            assertThat(job.succeeded()).isTrue();
            boolean anEntity = CloudStackResponses.jobEntity(job, "kubernetescluster", KubernetesCluster.class).isPresent()
                    || CloudStackResponses.jobEntity(job, "virtualmachine", VirtualMachine.class).isPresent()
                    || job.jobResult() != null;
            assertThat(anEntity).isTrue();
            parsed++;
        }
        if (parsed == 0) {
            // Answers of commands the operator does not use (config, upload params, usage history, ...)
            // must still unwrap without error.
            assertThat(envelope.isObject()).isTrue();
        }
    }

    @Test
    void readsTheRecordedKubernetesClusterWithItsVmMap() throws IOException {
        JsonNode envelope = CloudStackResponses.envelope(resource("cloudstack-go-testdata/extracted/listKubernetesClusters.json"));
        KubernetesCluster cluster = CloudStackResponses.listPage(envelope, "kubernetescluster", KubernetesCluster.class).items().get(0);

        assertThat(cluster.id()).isEqualTo("177d0eeb-8db7-455b-9085-33dcc591c8a3");
        assertThat(cluster.state()).isEqualTo("Starting");
        assertThat(cluster.account()).isEqualTo("admin");
        assertThat(cluster.kubernetesVersionName()).isEqualTo("v1.22.6");
        assertThat(cluster.size()).isEqualTo(1);
        assertThat(cluster.controlNodeCount()).isEqualTo(1);
        assertThat(cluster.clusterType()).as("this 4.17-era answer has no clustertype").isNull();
        assertThat(cluster.isCloudManaged()).isTrue();
        assertThat(cluster.vmIds()).containsExactly("c7a7c607-a7bf-4d52-bf27-6b9fbde0e849", "82369745-aa27-4dca-bb12-f7537e524843");
        VirtualMachine control = cluster.virtualMachines().get(0);
        assertThat(control.name()).isEqualTo("cks-cluster-control-1803b55c32d");
        assertThat(control.hostName()).isEqualTo("ref-trl-2845-k-M7-david-jumani-kvm2");
        assertThat(control.createdAt()).hasValueSatisfying(t -> assertThat(t).hasToString("2022-04-18T06:21:58Z"));
    }

    @Test
    void readsTheRecordedSupportedVersions() throws IOException {
        JsonNode envelope = CloudStackResponses.envelope(resource("cloudstack-go-testdata/extracted/listKubernetesSupportedVersions.json"));
        var versions = CloudStackResponses.listPage(envelope, "kubernetessupportedversion", KubernetesSupportedVersion.class).items();
        assertThat(versions).extracting(KubernetesSupportedVersion::semanticVersion).containsExactly("1.23.3", "1.24.0");
        assertThat(versions).extracting(KubernetesSupportedVersion::isUsable).containsExactly(true, false);
        assertThat(versions.get(0).isoId()).isEqualTo("ae158e0f-f65f-4f53-a604-24fe7e0b6764");
    }

    @Test
    void takesTheVmMapFromVirtualMachineIdsOnOlderServers() throws IOException {
        JsonNode envelope = CloudStackResponses.MAPPER.readTree(
                "{\"id\":\"c1\",\"name\":\"old\",\"state\":\"Running\",\"virtualmachineids\":[\"a\",\"b\"],\"somethingNew\":{\"x\":1}}");
        KubernetesCluster cluster = CloudStackResponses.MAPPER.convertValue(envelope, KubernetesCluster.class);
        assertThat(cluster.vmIds()).containsExactly("a", "b");
        assertThat(cluster.virtualMachines()).isEmpty();
    }

    @Test
    void treatsTheEmptyListFormAsNoItems() throws IOException {
        JsonNode sample = resource("response-format-samples.json").get("emptyList").get("example");
        ListPage<VirtualMachine> page = CloudStackResponses.listPage(CloudStackResponses.envelope(sample), "virtualmachine", VirtualMachine.class);
        assertThat(page.count()).isZero();
        assertThat(page.items()).isEmpty();
    }

    @Test
    void readsBothErrorShapes() throws IOException {
        JsonNode examples = resource("response-format-samples.json").get("error").get("examples");
        ApiError listError = CloudStackResponses.error(CloudStackResponses.envelope(examples.get(0))).orElseThrow();
        assertThat(listError).isEqualTo(new ApiError(530, 9999, "Fail"));
        ApiError authError = CloudStackResponses.error(CloudStackResponses.envelope(examples.get(1))).orElseThrow();
        assertThat(authError.errorCode()).isEqualTo(401);
        assertThat(authError.csErrorCode()).isEqualTo(9999);
    }

    @Test
    void readsPendingSucceededAndFailedJobs() throws IOException {
        JsonNode samples = resource("response-format-samples.json").get("queryAsyncJobResult");
        assertThat(CloudStackResponses.asyncJobResult(CloudStackResponses.envelope(samples.get("pending"))).isPending()).isTrue();
        AsyncJobResult done = CloudStackResponses.asyncJobResult(CloudStackResponses.envelope(samples.get("success")));
        assertThat(CloudStackResponses.jobEntity(done, "kubernetescluster", KubernetesCluster.class))
                .hasValueSatisfying(c -> assertThat(c.state()).isEqualTo("Running"));
        AsyncJobResult failed = CloudStackResponses.asyncJobResult(CloudStackResponses.envelope(samples.get("failure")));
        assertThat(failed.failed()).isTrue();
        assertThat(CloudStackResponses.jobError(failed).errorCode()).isEqualTo(530);
        assertThat(CloudStackResponses.jobError(failed).errorText()).startsWith("Failed to scale");
    }

    @Test
    void readsTheTextFormOfAFailedJobFromOldServers() throws IOException {
        AsyncJobResult failed = CloudStackResponses.asyncJobResult(CloudStackResponses.MAPPER.readTree(
                "{\"jobid\":\"j\",\"jobstatus\":2,\"jobresultcode\":530,\"jobresulttype\":\"text\",\"jobresult\":\"boom\"}"));
        assertThat(CloudStackResponses.jobError(failed)).isEqualTo(new ApiError(530, null, "boom"));
    }

    @Test
    void refusesAnAnswerThatIsNotCloudStackJson() throws IOException {
        assertThatThrownBy(() -> CloudStackResponses.envelope(CloudStackResponses.MAPPER.readTree("[1,2]")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CloudStackResponses.jobId(CloudStackResponses.MAPPER.readTree("{}"), "scaleKubernetesCluster"))
                .hasMessageContaining("scaleKubernetesCluster answered without a jobid");
    }
}
