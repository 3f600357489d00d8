package dev.cks.nodeops.demo;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.KubeletUpgradeSimulation;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.upgrade.ScriptTrust;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The README's first command (hack/demo.sh): a local CKS-like cluster (a real control plane with
 * KWOK nodes), a CloudStack simulator that knows the cluster's VMs, the packaged operator, and a
 * walk through what it does: an audit that finds drift, a scale-down that a PodDisruptionBudget
 * blocks and that rolls back, the same scale-down once the budget allows it, and an upgrade of the
 * remaining nodes. The "kubelet" side of the upgrade is played by {@link KubeletUpgradeSimulation},
 * since KWOK nodes run no real binaries.
 */
public final class DemoWalkthrough {
    private static final String TARGET = "v1.35.5";

    private final TestBed bed;
    private final KubernetesClient client;

    private DemoWalkthrough(TestBed bed) {
        this.bed = bed;
        this.client = bed.client();
    }

    public static void main(String[] args) throws Exception {
        say("Starting a local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and KWOK "
                + "playing 1 control-plane node and 3 workers (the first run builds them from Go modules).");
        TestBed bed = TestBed.shared();
        new DemoWalkthrough(bed).run();
        say("Done. Everything is stopped on exit.");
        System.exit(0);
    }

    private static final String UPGRADE_SCRIPT = "#!/bin/sh\nset -e\necho \"kubeadm upgrade $2 to $1\"\n";

    private void run() throws Exception {
        List<Node> nodes = client.nodes().list().getItems().stream()
                .filter(n -> n.getMetadata().getName().startsWith(TestBed.CLUSTER + "-")).toList();
        kubectl("get", "nodes");

        say("Starting the CloudStack simulator: a CloudManaged CKS cluster '" + TestBed.CLUSTER + "' whose VM map holds these "
                + nodes.size() + " nodes, plus one VM named like a node of this cluster that is in no cluster's map (drift).");
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, TestBed.CLUSTER, "CloudManaged", nodes)) {
            cloudStack.simulator().addVm(TestBed.CLUSTER + "-node-18c2f3afff", Owner.of(cloudStack.simulator().defaultAccount()));
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            // The only script the demo's NodeUpgrade may run, as the chart's upgrade.scripts would list it.
            properties.put("cks.upgrade.script-sha256", ScriptTrust.sha256(UPGRADE_SCRIPT));
            say("Starting the operator (log: target/operator-demo.log).");
            try (OperatorProcess operator = OperatorProcess.start(bed, "demo", properties);
                    KubeletUpgradeSimulation kubelets = new KubeletUpgradeSimulation(client, TestBed.OPERATOR_NAMESPACE)) {
                audit();
                String shop = workload();
                List<String> workers = nodes.stream().map(n -> n.getMetadata().getName()).filter(n -> n.contains("-node-")).sorted().toList();
                String leaving = workers.get(workers.size() - 1);
                blockedScaleDown(leaving);
                relaxBudget(shop);
                scaleDown(leaving);
                upgrade();
            }
        }
    }

    private void audit() {
        say("1/4 VMMapAudit: compare CloudStack's VM map with the cluster's nodes (detection only).");
        apply("""
                apiVersion: nodeops.cks.dev/v1alpha1
                kind: VMMapAudit
                metadata: {name: cluster}
                spec: {intervalSeconds: 30, gracePeriodSeconds: 0}
                """);
        await("the audit reports the drift", Duration.ofSeconds(60), () -> "False".equals(jsonPath("vma", "cluster",
                "{.status.conditions[?(@.type==\"InSync\")].status}")));
        kubectl("get", "vma");
        kubectl("get", "vma", "cluster", "-o", "jsonpath={range .status.findings[*]}  - {.type}: {.message}{\"\\n\"}{end}");
    }

    private String workload() {
        String namespace = "shop";
        say("A workload: Deployment shop/web with 3 replicas spread over the workers, and a PDB that needs all 3 available.");
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(namespace)
                .endMetadata().build()).serverSideApply();
        client.apps().deployments().inNamespace(namespace).resource(new DeploymentBuilder()
                .withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withReplicas(3).withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().addNewTopologySpreadConstraint().withMaxSkew(1).withTopologyKey("kubernetes.io/hostname")
                .withWhenUnsatisfiable("ScheduleAnyway").withNewLabelSelector().addToMatchLabels("app", "web").endLabelSelector()
                .endTopologySpreadConstraint()
                .addNewContainer().withName("web").withImage("registry.invalid/shop/web:1").endContainer()
                .endSpec().endTemplate().endSpec().build()).serverSideApply();
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).resource(new PodDisruptionBudgetBuilder()
                .withNewMetadata().withName("web-pdb").endMetadata()
                .withNewSpec().withMinAvailable(new IntOrString(3)).withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .build()).serverSideApply();
        await("3 web pods are ready", Duration.ofSeconds(90), () -> Integer.valueOf(3)
                .equals(client.apps().deployments().inNamespace(namespace).withName("web").get().getStatus().getReadyReplicas()));
        kubectl("get", "pods", "-n", namespace, "-o", "wide");
        return namespace;
    }

    private void blockedScaleDown(String node) {
        say("2/4 ScaleDown of " + node + " while the PDB allows no disruption: the drain is refused by the Eviction API,"
                + " so the operator rolls back (uncordons, removes nothing).");
        apply(scaleDownYaml("remove-one", node));
        await("the ScaleDown rolls back", Duration.ofSeconds(120), () -> "RolledBack".equals(jsonPath("sd", "remove-one", "{.status.phase}")));
        kubectl("get", "sd");
        kubectl("get", "sd", "remove-one", "-o", "jsonpath={range .status.conditions[*]}  {.type}={.status} {.reason}: {.message}{\"\\n\"}{end}");
        kubectl("get", "node", node);
    }

    private void relaxBudget(String namespace) {
        say("Relaxing the PDB to maxUnavailable: 1.");
        client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName("web-pdb").edit(pdb -> {
            pdb.getSpec().setMinAvailable(null);
            pdb.getSpec().setMaxUnavailable(new IntOrString(1));
            return pdb;
        });
    }

    private void scaleDown(String node) {
        say("3/4 The same ScaleDown again: cordon, drain through the Eviction API, then one scaleKubernetesCluster call to CloudStack.");
        apply(scaleDownYaml("remove-one-again", node));
        await("the ScaleDown succeeds", Duration.ofSeconds(180), () -> "Succeeded".equals(jsonPath("sd", "remove-one-again", "{.status.phase}")));
        kubectl("get", "sd");
        kubectl("get", "pods", "-n", "shop", "-o", "wide");
    }

    private void upgrade() {
        say("4/4 NodeUpgrade of the remaining nodes to " + TARGET + ", one at a time, the control-plane node first.");
        client.configMaps().inNamespace(TestBed.OPERATOR_NAMESPACE).resource(new ConfigMapBuilder()
                .withNewMetadata().withName("demo-upgrade").endMetadata()
                .addToData("upgrade.sh", UPGRADE_SCRIPT).build()).serverSideApply();
        apply("""
                apiVersion: nodeops.cks.dev/v1alpha1
                kind: NodeUpgrade
                metadata: {name: to-%s}
                spec:
                  targetVersion: %s
                  executor:
                    type: Script
                    script: {configMapRef: {name: demo-upgrade, key: upgrade.sh}}
                    jobTimeoutSeconds: 120
                  readyTimeoutSeconds: 120
                """.formatted(TARGET.replace('.', '-'), TARGET));
        await("the upgrade succeeds", Duration.ofSeconds(300), () -> "Succeeded".equals(jsonPath("nu", "to-" + TARGET.replace('.', '-'), "{.status.phase}")));
        kubectl("get", "nu");
        kubectl("get", "nodes");
    }

    private static String scaleDownYaml(String name, String node) {
        return """
                apiVersion: nodeops.cks.dev/v1alpha1
                kind: ScaleDown
                metadata: {name: %s}
                spec:
                  nodeNames: [%s]
                  drain: {timeoutSeconds: 10, retries: 1, retryIntervalSeconds: 2}
                  timeoutSeconds: 300
                """.formatted(name, node);
    }

    private void apply(String yaml) {
        try {
            var file = Files.createTempFile("demo", ".yaml");
            Files.writeString(file, yaml);
            System.out.println("$ kubectl apply -f - <<EOF");
            yaml.lines().forEach(line -> System.out.println("  " + line));
            System.out.println("  EOF");
            bed.runTool("kubectl", "apply", "-f", file.toString()).output().lines().forEach(line -> System.out.println("  " + line));
            Files.delete(file);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private String jsonPath(String kind, String name, String path) {
        TestBed.ToolResult result = bed.runTool("kubectl", "get", kind, name, "-o", "jsonpath=" + path);
        return result.exitCode() == 0 ? result.output().strip() : "";
    }

    /** Waits for the condition, printing `kubectl get nu,sd,vma` every few seconds so the progress shows. */
    private void await(String what, Duration timeout, BooleanSupplier done) {
        Instant end = Instant.now().plus(timeout);
        Instant nextPrint = Instant.now();
        while (!done.getAsBoolean()) {
            if (Instant.now().isAfter(end)) {
                kubectl("get", "nu,sd,vma");
                throw new IllegalStateException("the demo expected that " + what + " within " + timeout + "; see target/operator-demo.log");
            }
            if (Instant.now().isAfter(nextPrint)) {
                System.out.println("    waiting until " + what + " …");
                bed.runTool("kubectl", "get", "nu,sd,vma", "--no-headers", "--ignore-not-found").output().lines()
                        .forEach(line -> System.out.println("      " + line));
                nextPrint = Instant.now().plusSeconds(5);
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private void kubectl(String... args) {
        List<String> command = new ArrayList<>(List.of("$ kubectl"));
        command.addAll(List.of(args));
        System.out.println(String.join(" ", command).replaceAll("jsonpath=.*", "jsonpath=…"));
        TestBed.ToolResult result = bed.runTool("kubectl", args);
        result.output().lines().forEach(line -> System.out.println("  " + line));
    }

    private static void say(String text) {
        System.out.println();
        System.out.println("==> " + text);
    }
}
