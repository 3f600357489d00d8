package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.CloudStackException.Kind;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.junit5.StartStop;
import org.junit.jupiter.api.Test;

/** Answers the simulator does not give: partial failures, other error envelopes, non-CloudStack pages. */
class CloudStackClientAnswersTest {

    @StartStop
    private final MockWebServer server = new MockWebServer();

    private final ManualTime time = new ManualTime();

    private CloudStackClient client() {
        return new CloudStackClient(CloudStackCredentials.of(server.url("/client/api").toString(), "key-1234", "secret-5678"),
                CloudStackClientSettings.DEFAULTS.withRetries(RetryPolicy.NONE, RetryPolicy.NONE), new SimpleMeterRegistry(), time, time);
    }

    private void answer(int status, String body) {
        server.enqueue(new MockResponse.Builder().code(status).addHeader("Content-Type", "application/json").body(body).build());
    }

    @Test
    void reportsAVmTheServerCouldNotRemoveFromTheMap() {
        answer(200, "{\"removevirtualmachinesfromkubernetesclusterresponse\":{\"count\":2,\"virtualmachine\":["
                + "{\"id\":\"a\",\"success\":true},{\"id\":\"b\",\"success\":false,\"displaytext\":\"VM is a control node\"}]}}");

        CloudStackException failure = catchThrowableOfType(CloudStackException.class,
                () -> client().removeVirtualMachinesFromKubernetesCluster("c1", List.of("a", "b")));

        assertThat(failure.getMessage()).contains("VM b was not removed from cluster c1: VM is a control node");
    }

    @Test
    void knowsTheNoIsoRefusalAlsoFromAnOlderDispatcher() {
        // ApiAsyncJobDispatcher before the job framework kept the error's code recorded every failure as
        // 530 and some versions prefix the root cause's class name.
        answer(200, "{\"detachisoresponse\":{\"jobid\":\"j1\"}}");
        answer(200, "{\"queryasyncjobresultresponse\":{\"jobid\":\"j1\",\"jobstatus\":2,\"jobresultcode\":530,"
                + "\"jobresulttype\":\"object\",\"jobresult\":{\"errorcode\":530,"
                + "\"errortext\":\"ServerApiException: The specified VM has no ISO attached to it.\"}}}");

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> client().detachIso("vm-1"));

        assertThat(failure.isNoIsoAttached()).isTrue();
    }

    @Test
    void readsTheGenericErrorEnvelope() {
        // The request, then the clock's first probe (expiring a day ahead): refused too, so it is the keys, not the clock.
        for (int answer = 0; answer < 2; answer++) {
            answer(401, "{\"errorresponse\":{\"errorcode\":401,\"cserrorcode\":9999,\"errortext\":\"unable to verify user credentials\"}}");
        }

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> client().listKubernetesSupportedVersions());

        assertThat(failure.isAuthenticationFailure()).isTrue();
        assertThat(failure.csErrorCode()).isEqualTo(9999);
    }

    @Test
    void refusesAPageThatIsNotCloudStackJson() {
        answer(200, "<html>Login</html>");

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> client().listKubernetesSupportedVersions());

        assertThat(failure.kind()).isEqualTo(Kind.HTTP_ERROR);
        assertThat(failure.errorText()).contains("not CloudStack JSON");
    }

    @Test
    void doesNotFollowARedirectWithTheSignedRequest() {
        server.enqueue(new MockResponse.Builder().code(302).addHeader("Location", "https://elsewhere.example/client/api").build());

        CloudStackException failure = catchThrowableOfType(CloudStackException.class, () -> client().destroyVirtualMachine("vm"));

        assertThat(failure.httpStatus()).isEqualTo(302);
        assertThat(failure.errorText()).contains("set api-url to the final URL");
        assertThat(server.getRequestCount()).isEqualTo(1);
    }

    @Test
    void toleratesFieldsFromNewerServers() {
        answer(200, "{\"listkubernetesclustersresponse\":{\"count\":1,\"kubernetescluster\":[{\"id\":\"c1\",\"name\":\"n\","
                + "\"state\":\"Running\",\"clustertype\":\"ExternalManaged\",\"size\":\"3\",\"etcdnodes\":3,"
                + "\"cniconfigname\":\"calico\",\"virtualmachines\":[{\"id\":\"v1\",\"name\":\"n-1\",\"isexternalnode\":true,"
                + "\"nodeversion\":\"1.33.1\",\"nic\":[{\"id\":\"x\"}]}],\"somethingNew\":{\"nested\":[1,2]}}]}}");

        KubernetesCluster cluster = client().listKubernetesClusters(OwnerScope.CALLER).get(0);

        assertThat(cluster.isCloudManaged()).isFalse();
        assertThat(cluster.size()).isEqualTo(3);
        assertThat(cluster.etcdNodes()).isEqualTo(3);
        assertThat(cluster.vmIds()).containsExactly("v1");
    }
}
