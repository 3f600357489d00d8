package dev.cks.nodeops.upgrade;

import java.time.Duration;

import org.awaitility.Awaitility;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Keeps the API server from admitting any pod bound to one node (a ValidatingAdmissionPolicy), so an
 * upgrade Job on that node stays active with no pod: KWOK would otherwise complete it at once. That is
 * how a test holds a node in Upgrading, or lets the Job run into its activeDeadlineSeconds and fail.
 * Dry runs pass: the operator's dry run of the Job before cordoning must see what a cluster whose
 * kubelet never starts the pod would show it — an admissible pod.
 */
final class PodsHeldOffNode implements AutoCloseable {
    private final KubernetesClient client;
    private final String policy;

    PodsHeldOffNode(KubernetesClient client, String node, String probeNamespace) {
        this.client = client;
        this.policy = "nu-it-hold-" + node;
        deny(client, policy, "CREATE", "pods", "request.dryRun || !has(object.spec.nodeName) || object.spec.nodeName != '" + node + "'",
                "the test holds pods off node " + node);
        // The policy takes effect once the API server has compiled it: probe with a real pod (dry runs pass).
        Awaitility.await("admission policy " + policy + " in force").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    var probe = client.pods().inNamespace(probeNamespace).resource(new PodBuilder().withNewMetadata().withName(policy + "-probe").endMetadata()
                            .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.invalid/probe:1").endContainer()
                            .endSpec().build());
                    try {
                        probe.create();
                        probe.withGracePeriod(0).delete();
                        return false;
                    } catch (KubernetesClientException e) {
                        return e.getMessage() != null && e.getMessage().contains("holds pods off");
                    }
                });
    }

    @Override
    public void close() {
        remove(client, policy);
    }

    /**
     * The API version of ValidatingAdmissionPolicy: v1 since Kubernetes 1.30; a bed of 1.28 or 1.29 serves v1beta1 only,
     * which hack/testbed.sh turns on there (it is off by default).
     */
    private static String admissionApi(KubernetesClient client) {
        return client.supports("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy") ? "admissionregistration.k8s.io/v1"
                : "admissionregistration.k8s.io/v1beta1";
    }

    /** A ValidatingAdmissionPolicy and its binding that deny {@code operation} on {@code resource} where {@code expression} is false. */
    static void deny(KubernetesClient client, String policy, String operation, String resource, String expression, String message) {
        client.resource("""
                apiVersion: %6$s
                kind: ValidatingAdmissionPolicy
                metadata: {name: %1$s}
                spec:
                  failurePolicy: Fail
                  matchConstraints:
                    resourceRules:
                    - {apiGroups: [""], apiVersions: ["v1"], operations: ["%2$s"], resources: ["%3$s"]}
                  validations:
                  - expression: "%4$s"
                    message: "%5$s"
                """.formatted(policy, operation, resource, expression, message, admissionApi(client))).serverSideApply();
        client.resource("""
                apiVersion: %2$s
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: %1$s}
                spec:
                  policyName: %1$s
                  validationActions: [Deny]
                """.formatted(policy, admissionApi(client))).serverSideApply();
    }

    static void remove(KubernetesClient client, String policy) {
        client.resource("""
                apiVersion: %2$s
                kind: ValidatingAdmissionPolicyBinding
                metadata: {name: %1$s}
                """.formatted(policy, admissionApi(client))).delete();
        client.resource("""
                apiVersion: %2$s
                kind: ValidatingAdmissionPolicy
                metadata: {name: %1$s}
                """.formatted(policy, admissionApi(client))).delete();
    }
}
