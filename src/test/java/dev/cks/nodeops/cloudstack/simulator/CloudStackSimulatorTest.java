package dev.cks.nodeops.cloudstack.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackCredentials;
import dev.cks.nodeops.cloudstack.KubernetesCluster;
import dev.cks.nodeops.cloudstack.OwnerScope;
import dev.cks.nodeops.cloudstack.RequestSigner;
import dev.cks.nodeops.cloudstack.VmQuery;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The simulator's wire format, checked with hand-made requests rather than the client. */
class CloudStackSimulatorTest {

    private final CloudStackSimulator simulator = CloudStackSimulator.start();
    private final OkHttpClient http = new OkHttpClient();

    @AfterEach
    void stop() {
        simulator.close();
    }

    private String get(Map<String, String> params, boolean sign) throws Exception {
        return get(params, sign, simulator.defaultAccount());
    }

    private String get(Map<String, String> params, boolean sign, SimulatedAccount user) throws Exception {
        Map<String, String> all = new LinkedHashMap<>(params);
        all.put("response", "json");
        all.put("apikey", user.apiKey());
        StringBuilder query = new StringBuilder();
        all.forEach((name, value) -> query.append(name).append('=').append(RequestSigner.encodeValue(value)).append('&'));
        String signature = sign ? RequestSigner.sign(all, user.secretKey()) : "bm90LWEtc2lnbmF0dXJl";
        query.append("signature=").append(RequestSigner.encodeValue(signature));
        try (Response response = http.newCall(new Request.Builder().url(simulator.apiUrl() + "?" + query).build()).execute()) {
            return response.code() + " " + response.body().string();
        }
    }

    @Test
    void answersAnEmptyListWithAnEmptyObject() throws Exception {
        assertThat(get(Map.of("command", "listVirtualMachines"), true)).isEqualTo("200 {\"listvirtualmachinesresponse\":{}}");
    }

    @Test
    void refusesABadSignatureInCloudStacksErrorShape() throws Exception {
        String answer = get(Map.of("command", "listVirtualMachines"), false);

        assertThat(answer).startsWith("401 ");
        JsonNode error = new ObjectMapper().readTree(answer.substring(4)).get("listvirtualmachinesresponse");
        assertThat(error.get("uuidList").isArray()).isTrue();
        assertThat(error.get("errorcode").asInt()).isEqualTo(401);
        assertThat(error.has("cserrorcode")).as("ApiServlet's 401 carries none").isFalse();
        assertThat(error.get("errortext").asText()).isEqualTo("unable to verify user credentials and/or request signature");
        assertThat(simulator.calls()).singleElement().satisfies(call -> {
            assertThat(call.authenticated()).isFalse();
            assertThat(call.params()).doesNotContainKeys("apikey", "signature");
        });
    }

    /** AsyncJobJoinDaoImpl.newAsyncJobResponse: a job names its account, domain and the user whose key started it. */
    @Test
    void aJobNamesTheUserWhoseKeyStartedIt() throws Exception {
        SimulatedAccount second = simulator.addUser(simulator.defaultAccount(), "second");
        SimulatedVm vm = simulator.addVm("old", Owner.of(simulator.defaultAccount()));
        String jobId = json(get(Map.of("command", "destroyVirtualMachine", "id", vm.id()), true, second))
                .get("destroyvirtualmachineresponse").get("jobid").asText();

        JsonNode job = json(get(Map.of("command", "listAsyncJobs"), true)).get("listasyncjobsresponse").get("asyncjobs").get(0);

        assertThat(job.get("jobid").asText()).isEqualTo(jobId);
        assertThat(job.get("userid").asText()).isEqualTo(simulator.userId(second)).isNotEqualTo(simulator.userId(simulator.defaultAccount()));
        assertThat(job.get("account").asText()).isEqualTo(simulator.defaultAccount().name());
        assertThat(job.get("domainpath").asText()).isEqualTo("ROOT");
    }

    private static JsonNode json(String answer) throws Exception {
        return new ObjectMapper().readTree(answer.substring(4));
    }

    @Test
    void countsAllMatchesWhilePaging() throws Exception {
        for (int i = 0; i < 7; i++) {
            simulator.addVm("vm-" + i, Owner.of(simulator.defaultAccount()));
        }

        JsonNode page = new ObjectMapper().readTree(get(Map.of("command", "listVirtualMachines", "page", "2", "pagesize", "5"), true)
                .substring(4)).get("listvirtualmachinesresponse");

        assertThat(page.get("count").asInt()).isEqualTo(7);
        assertThat(page.get("virtualmachine")).hasSize(2);
    }

    @Test
    void leavesTheVmMapEntryOfAVmDestroyedBehindCksBack() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        String worker = cluster.vmIds().get(1);

        simulator.destroyVm(worker, false);

        assertThat(simulator.cluster(cluster.id()).vmIds()).contains(worker);
        assertThat(simulator.vm(worker).state()).isEqualTo("Destroyed");
    }

    @Test
    void aRepairedMapNeitherListsNorCountsAnExpungedWorker() {
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);
        String worker = cluster.vmIds().get(1);
        simulator.destroyVm(worker, true);

        simulator.repairClusterMap(cluster.id(), worker, NodeRole.WORKER);

        assertThat(simulator.cluster(cluster.id()).vmIds()).doesNotContain(worker).hasSize(2);
        assertThat(simulator.cluster(cluster.id()).size()).isEqualTo(1);
        assertThat(simulator.cluster(cluster.id()).controlNodes()).isEqualTo(1);
    }

    @Test
    void startsFromTheDemoSeed() throws Exception {
        JsonNode seed;
        try (InputStream in = getClass().getResourceAsStream("/simulator/demo-seed.json")) {
            seed = new ObjectMapper().readTree(in);
        }
        try (CloudStackSimulator demo = CloudStackSimulatorMain.startSeeded(0, seed)) {
            CloudStackClient client = CloudStackClient.create(
                    CloudStackCredentials.of(demo.apiUrl(), "demo-api-key", "demo-secret-key"), new SimpleMeterRegistry());

            assertThat(client.listKubernetesClusters(OwnerScope.CALLER)).singleElement()
                    .satisfies(cluster -> assertThat(cluster.vmIds()).hasSize(4))
                    .extracting(KubernetesCluster::size).isEqualTo(3L);
            assertThat(client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER))).hasSize(6);
            assertThat(client.listKubernetesSupportedVersions()).hasSize(2);
        }
    }
}
