package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;

/**
 * A pod's log on the KWOK bed, as its kubelet would serve it: the lines are written to a file in the CRI log format (the
 * container runtime's, which KWOK parses), and a Logs object (kwok.x-k8s.io/v1alpha1, named after the pod, in its
 * namespace) has KWOK serve that file for every container of the pod. The API server reaches KWOK's kubelet server for
 * pods/log as it reaches a kubelet, so whoever reads the pod's log through the API (the operator) reads these lines.
 * hack/testbed.sh creates the bed with that kind enabled; a pod without a Logs object has no log, as before.
 */
public final class ServedPodLog implements AutoCloseable {
    private static final String API_VERSION = "kwok.x-k8s.io/v1alpha1";
    private static final String KIND = "Logs";
    private final Resource<GenericKubernetesResource> logs;
    private final Path file;

    private ServedPodLog(Resource<GenericKubernetesResource> logs, Path file) {
        this.logs = logs;
        this.file = file;
    }

    /** Serves {@code log} (its lines, as the container printed them) as the log of every container of {@code pod}; returns once the API server serves it. */
    public static ServedPodLog serve(TestBed bed, Pod pod, String log) {
        KubernetesClient client = bed.client();
        String namespace = pod.getMetadata().getNamespace();
        String name = pod.getMetadata().getName();
        Path file = bed.projectRoot().resolve("target/served-pod-logs").resolve(bed.name()).resolve(namespace + "_" + name + ".log").toAbsolutePath();
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, criLog(log));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        GenericKubernetesResource object = new GenericKubernetesResourceBuilder().withApiVersion(API_VERSION).withKind(KIND)
                .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
                .addToAdditionalProperties("spec", Map.of("logs", List.of(Map.of("logsFile", file.toString())))).build();
        Resource<GenericKubernetesResource> logs = client.genericKubernetesResources(API_VERSION, KIND).inNamespace(namespace).withName(name);
        try {
            client.genericKubernetesResources(API_VERSION, KIND).inNamespace(namespace).resource(object).create();
        } catch (KubernetesClientException e) {
            throw new IllegalStateException("The bed " + bed.name() + " serves no pod logs: creating a " + API_VERSION + " " + KIND + " object failed ("
                    + e.getMessage() + "). hack/testbed.sh creates the cluster with `--enable-crds Logs`; a bed started by an older script lacks"
                    + " it: start it again (hack/testbed.sh up " + bed.name() + ").", e);
        }
        ServedPodLog served = new ServedPodLog(logs, file);
        // KWOK learns of the object by its watch: the log counts as served once the API server hands it out.
        try {
            Awaitility.await("the log of pod " + namespace + "/" + name + " served by KWOK").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200)).ignoreExceptionsInstanceOf(KubernetesClientException.class)
                    .until(() -> asRead(log).equals(client.pods().inNamespace(namespace).withName(name).getLog()));
        } catch (ConditionTimeoutException e) {
            served.close();
            throw e;
        }
        return served;
    }

    /** Each line as the container runtime writes it (`<RFC 3339 time> stdout F <line>`), which KWOK parses as a kubelet does. */
    private static String criLog(String log) {
        StringBuilder cri = new StringBuilder();
        Instant at = Instant.now();
        for (String line : lines(log)) {
            cri.append(at).append(" stdout F ").append(line).append('\n');
        }
        return cri.toString();
    }

    /** The log as the API server hands it out: each line ended by a newline. */
    private static String asRead(String log) {
        return String.join("\n", lines(log)) + "\n";
    }

    private static List<String> lines(String log) {
        return List.of((log.endsWith("\n") ? log.substring(0, log.length() - 1) : log).split("\n", -1));
    }

    @Override
    public void close() {
        logs.delete();
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
