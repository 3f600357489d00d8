package dev.cks.nodeops.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;

/** The packaged operator, run against the real API server, answers every sample with a condition. */
@ExtendWith(TestBedExtension.class)
class OperatorAcceptsSamplesIT {
    @Test
    void everySampleGetsAcceptedAndObservedGeneration(TestBed bed) throws IOException {
        KubernetesClient client = bed.client();
        try (OperatorProcess ignored = OperatorProcess.start(bed, "accepts-samples", Map.of())) {
            for (String sample : List.of("nodeupgrade.yaml", "scaledown.yaml", "vmmapaudit.yaml", "drainreport.yaml", "nodeupgrade-maintenance.yaml",
                    "scaledown-maintenance.yaml", "nodeupgrade-continuous.yaml")) {
                GenericKubernetesResource resource = client.getKubernetesSerialization()
                        .unmarshal(Files.readString(Path.of("config/samples", sample)), GenericKubernetesResource.class);
                resource.getMetadata().setName("accepted-" + resource.getMetadata().getName());
                GenericKubernetesResource created = client.resource(resource).create();
                try {
                    GenericKubernetesResource reconciled = client.resource(created).waitUntilCondition(r -> observed(r), 60, TimeUnit.SECONDS);
                    Map<String, Object> accepted = condition(reconciled, "Accepted");
                    assertThat(accepted).as("%s: Accepted condition", sample).containsEntry("status", "True");
                    assertThat(((Number) accepted.get("observedGeneration")).longValue()).isEqualTo(reconciled.getMetadata().getGeneration());
                } finally {
                    client.resource(created).delete();
                }
            }
        }
    }

    /** The chart's logFormat: json: every line the operator writes is one JSON object with a level and a message. */
    @Test
    void logsAreJsonLinesWhenAskedFor(TestBed bed) throws IOException {
        String output;
        try (OperatorProcess operator = OperatorProcess.start(bed, "json-logs", Map.of("quarkus.log.console.json.enabled", "true"))) {
            output = operator.output();
        }
        List<String> lines = output.lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).as("the operator wrote something").isNotEmpty();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        for (String line : lines) {
            com.fasterxml.jackson.databind.JsonNode entry = json.readTree(line);
            assertThat(entry.isObject()).as(line).isTrue();
            assertThat(entry.hasNonNull("level") && entry.hasNonNull("message")).as("level and message in %s", line).isTrue();
        }
    }

    private static boolean observed(GenericKubernetesResource resource) {
        Map<String, Object> status = resource.get("status");
        return status != null && status.get("observedGeneration") != null
                && ((Number) status.get("observedGeneration")).longValue() == resource.getMetadata().getGeneration();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> condition(GenericKubernetesResource resource, String type) {
        List<Map<String, Object>> conditions = resource.get("status", "conditions");
        return conditions.stream().filter(c -> type.equals(c.get("type"))).findFirst().orElseThrow();
    }
}
