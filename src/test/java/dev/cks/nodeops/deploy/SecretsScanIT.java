package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.audit.VMMapAuditSpec;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import dev.cks.nodeops.upgrade.NodeUpgradeSpec;
import dev.cks.nodeops.upgrade.NodeUpgradeStatus;
import dev.cks.nodeops.upgrade.UpgradeExecutor;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The CloudStack keys appear nowhere the operator writes: after its own run, in which CloudStack's errors
 * echo the keys and a signature back (as a misbehaving server or proxy might), it scans every operator
 * process's output of the whole IT run (it runs after the other classes, {@link dev.cks.nodeops.testbed.JudgesRunLast}),
 * the status of every NodeUpgrade, ScaleDown and VMMapAudit there is, and every Event in the cluster, for
 * every API key and secret key any fixture of the run handed out, and for {@code signature=}.
 */
@ExtendWith(TestBedExtension.class)
class SecretsScanIT {
    private static final Duration WITHIN = Duration.ofSeconds(120);

    @Test
    void noKeyAndNoSignatureInAnyOutputStatusOrEventOfTheRun(TestBed bed) throws IOException {
        KubernetesClient client = bed.client();
        List<Node> nodes = new ArrayList<>(List.of(bed.addControlPlane("scan"), bed.addWorker("scan"), bed.addWorker("scan")));
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "scan", "CloudManaged", nodes)) {
            String apiKey = cloudStack.simulator().defaultAccount().apiKey();
            String secretKey = cloudStack.simulator().defaultAccount().secretKey();
            String echo = " (request: apikey=" + apiKey + "&signature=c2lnbmF0dXJl, key " + apiKey + ", secret " + secretKey + ")";
            cloudStack.simulator().planJob("scaleKubernetesCluster", JobOutcome.fails(530, "Failed to scale Kubernetes cluster" + echo));
            cloudStack.simulator().planJob("attachIso", JobOutcome.fails(530, "Failed to attach ISO" + echo));
            cloudStack.simulator().addSupportedVersion("1.35.9");
            Map<String, String> properties = new LinkedHashMap<>(cloudStack.operatorProperties());
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            try (OperatorProcess operator = OperatorProcess.start(bed, "secrets-scan", properties)) {
                client.resource(scaleDown(nodes.get(2).getMetadata().getName())).create();
                client.resource(nodeUpgrade(nodes.get(1).getMetadata().getName())).create();
                await(() -> phase(client.resources(ScaleDown.class).withName("scan-remove").get()), ScaleDownStatus.Phase.Failed.name());
                await(() -> phase(client.resources(NodeUpgrade.class).withName("scan-upgrade").get()), NodeUpgradeStatus.Phase.Failed.name());
                // The audit meets CloudStack errors echoing the keys too.
                cloudStack.simulator().injectFault("listKubernetesClusters", Fault.serverError(), Fault.serverError(), Fault.serverError(),
                        Fault.serverError(), new Fault.ApiErrorAnswer(530, 9999, "Internal error" + echo));
                client.resource(audit(cloudStack.cluster().id())).create();
                Awaitility.await("the audit ran").atMost(WITHIN).until(() -> {
                    VMMapAudit audit = client.resources(VMMapAudit.class).withName("scan-audit").get();
                    return audit.getStatus() != null && audit.getStatus().getLastRun() != null;
                });
            } finally {
                client.resources(ScaleDown.class).withName("scan-remove").delete();
                client.resources(NodeUpgrade.class).withName("scan-upgrade").delete();
                client.resources(VMMapAudit.class).withName("scan-audit").delete();
            }
        }

        Map<String, String> written = new LinkedHashMap<>();
        try (Stream<Path> logs = Files.list(bed.projectRoot().resolve("target")).filter(p -> p.getFileName().toString().matches("operator-.*\\.log"))) {
            for (Path log : logs.toList()) {
                written.put(log.getFileName().toString(), Files.readString(log, StandardCharsets.UTF_8));
            }
        }
        for (TestBed each : bed.bedsOfTheRun()) { // every fork's bed: the classes of the suite ran on them
            KubernetesClient on = each.client();
            String in = each == bed ? "" : " in bed " + each.name();
            on.resources(NodeUpgrade.class).list().getItems().forEach(r -> written.put("status of NodeUpgrade " + r.getMetadata().getName() + in,
                    on.getKubernetesSerialization().asJson(r.getStatus())));
            on.resources(ScaleDown.class).list().getItems().forEach(r -> written.put("status of ScaleDown " + r.getMetadata().getName() + in,
                    on.getKubernetesSerialization().asJson(r.getStatus())));
            on.resources(VMMapAudit.class).list().getItems().forEach(r -> written.put("status of VMMapAudit " + r.getMetadata().getName() + in,
                    on.getKubernetesSerialization().asJson(r.getStatus())));
            for (Event event : on.v1().events().inAnyNamespace().list().getItems()) {
                written.put("event " + event.getMetadata().getNamespace() + "/" + event.getMetadata().getName() + in,
                        event.getReason() + " " + event.getMessage());
            }
        }
        List<String> keys = List.copyOf(CloudStackFixture.keysOfTheRun());

        assertThat(written.keySet()).as("operator outputs scanned").anyMatch(name -> name.equals("operator-secrets-scan.log"));
        assertThat(written.values()).as("the run's own failures were recorded").anyMatch(text -> text.contains("Failed to scale Kubernetes cluster"));
        assertThat(keys).hasSizeGreaterThanOrEqualTo(2);
        List<String> hits = new ArrayList<>();
        written.forEach((where, text) -> {
            keys.stream().filter(text::contains).forEach(key -> hits.add(where + " contains a CloudStack key " + key.substring(0, 4) + "…"));
            if (text.toLowerCase(java.util.Locale.ROOT).contains("signature=") && !text.contains("signature=***")) {
                hits.add(where + " contains a signature");
            }
        });
        assertThat(hits).as("keys or signatures in %d outputs, statuses and events", written.size()).isEmpty();
    }

    private static void await(java.util.concurrent.Callable<String> phase, String expected) {
        Awaitility.await("phase " + expected).atMost(WITHIN).until(phase, expected::equals);
    }

    private static String phase(ScaleDown scaleDown) {
        return scaleDown == null || scaleDown.getStatus() == null || scaleDown.getStatus().getPhase() == null ? null : scaleDown.getStatus().getPhase().name();
    }

    private static String phase(NodeUpgrade upgrade) {
        return upgrade == null || upgrade.getStatus() == null || upgrade.getStatus().getPhase() == null ? null : upgrade.getStatus().getPhase().name();
    }

    private static ScaleDown scaleDown(String node) {
        ScaleDown scaleDown = new ScaleDown();
        scaleDown.getMetadata().setName("scan-remove");
        ScaleDownSpec spec = new ScaleDownSpec();
        spec.setNodeNames(List.of(node));
        scaleDown.setSpec(spec);
        return scaleDown;
    }

    private static NodeUpgrade nodeUpgrade(String node) {
        NodeUpgrade upgrade = new NodeUpgrade();
        upgrade.getMetadata().setName("scan-upgrade");
        NodeUpgradeSpec spec = new NodeUpgradeSpec();
        spec.setTargetVersion("v1.35.9");
        spec.setSelector(new LabelSelector(null, Map.of("kubernetes.io/hostname", node)));
        UpgradeExecutor executor = new UpgradeExecutor();
        executor.setType(UpgradeExecutor.Type.CloudStackIso);
        spec.setExecutor(executor);
        upgrade.setSpec(spec);
        return upgrade;
    }

    private static VMMapAudit audit(String clusterId) {
        VMMapAudit audit = new VMMapAudit();
        audit.getMetadata().setName("scan-audit");
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId(clusterId);
        spec.setIntervalSeconds(30);
        audit.setSpec(spec);
        return audit;
    }
}
