package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chart's values, rendered by the bed's Helm (no cluster needed): `helm lint --strict`, the closed
 * values schema, and every value a user may set shows up where it should. Installing, testing and
 * upgrading the chart in a cluster: HelmChartIT, ChartUpgradeIT.
 */
class ChartValuesIT {
    private static final String CHART = "deploy/helm/cks-node-operator";
    private static String helm;

    @BeforeAll
    static void helm() throws Exception {
        run(List.of("bash", "hack/testbed.sh", "build")); // nothing to do when the bed's binaries are cached
        helm = Path.of(run(List.of("bash", "hack/testbed.sh", "bin")).output().strip(), "helm").toString();
    }

    @Test
    void lintsStrictly() throws Exception {
        assertThat(helm("lint", CHART, "--strict").output()).contains("1 chart(s) linted, 0 chart(s) failed");
    }

    @Test
    void theSchemaRefusesUnknownValuesWrongTypesAndAnImageWithoutDigest() throws Exception {
        assertThat(template("--set", "replicaCont=2").output()).contains("additional properties 'replicaCont' not allowed");
        assertThat(template("--set", "drain.timeoutSecond=5").output()).contains("additional properties 'timeoutSecond' not allowed");
        assertThat(template("--set", "drain.retries=-1").output()).contains("minimum: got -1, want 0");
        assertThat(template("--set", "logFormat=xml").output()).contains("logFormat");
        assertThat(template("--set", "upgrade.jobImage=busybox:1.37").output()).contains("does not match pattern");
        assertThat(template("--kube-version", "v1.28.0").output()).contains("chart requires kubeVersion: >=1.29.0-0");
    }

    @Test
    void aReleaseNamedLikeTheChartIsNotDoubledAndOverridesReplaceTheName() throws Exception {
        assertThat(rendered("cks-node-operator")).contains("name: cks-node-operator\n").doesNotContain("cks-node-operator-cks-node-operator");
        assertThat(rendered("ops", "--set", "fullnameOverride=nodeops")).contains("name: nodeops\n", "name: nodeops-metrics\n")
                .doesNotContain("ops-cks-node-operator");
        assertThat(rendered("ops", "--set", "nameOverride=nodeops")).contains("name: ops-nodeops\n", "app.kubernetes.io/name: nodeops");
    }

    @Test
    void affinityIsHonouredWithSeveralReplicasAndTheDefaultSpreadsThem() throws Exception {
        assertThat(rendered("r", "--set", "replicaCount=2")).contains("podAntiAffinity");
        String custom = rendered("r", "--set", "replicaCount=2", "--set", "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
                "--set", "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].key=pool",
                "--set", "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].operator=Exists");
        assertThat(custom).contains("nodeAffinity", "key: pool").doesNotContain("podAntiAffinity");
    }

    @Test
    void podSettingsReachThePod() throws Exception {
        String deployment = rendered("r", "--show-only", "templates/deployment.yaml", "--set", "podAnnotations.team=ops", "--set", "podLabels.tier=infra",
                "--set", "extraEnv[0].name=QUARKUS_LOG_CATEGORY__DEV_CKS__LEVEL", "--set", "extraEnv[0].value=DEBUG",
                "--set", "priorityClassName=system-cluster-critical", "--set", "logFormat=json",
                "--set", "topologySpreadConstraints[0].maxSkew=1", "--set", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
                "--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
                "--set", "livenessProbe.periodSeconds=30", "--set", "readinessProbe.failureThreshold=6",
                "--set", "jvmOptions=-XX:MaxRAMPercentage=40");
        assertThat(deployment).containsPattern("name: JDK_JAVA_OPTIONS\\s+value: \"-XX:MaxRAMPercentage=40\"");
        assertThat(rendered("r", "--show-only", "templates/deployment.yaml")).as("the image's JVM defaults apply unless jvmOptions is set")
                .doesNotContain("JDK_JAVA_OPTIONS");
        assertThat(deployment).contains("team: ops", "tier: infra", "name: QUARKUS_LOG_CATEGORY__DEV_CKS__LEVEL", "value: DEBUG",
                "priorityClassName: \"system-cluster-critical\"", "topologyKey: topology.kubernetes.io/zone", "periodSeconds: 30", "failureThreshold: 6");
        assertThat(deployment).containsPattern("name: QUARKUS_LOG_CONSOLE_JSON_ENABLED\\s+value: \"true\"");
    }

    /**
     * Shape: an air-gapped site, whose nodes pull only from its own registry (behind a pull secret). The upgrade
     * Jobs use the operator's pull secrets and may request CPU and memory for a namespace with a quota; a limit
     * is refused (kubeadm runs in the Job container's cgroup).
     */
    @Test
    void theUpgradeJobsPullWithTheOperatorsSecretsAndRequestWhatTheyAreGiven() throws Exception {
        String deployment = rendered("r", "--show-only", "templates/deployment.yaml", "--set", "imagePullSecrets[0].name=mirror",
                "--set", "imagePullSecrets[1].name=mirror-2", "--set", "upgrade.jobResources.requests.cpu=100m",
                "--set", "upgrade.jobResources.requests.memory=64Mi");
        assertThat(deployment).containsPattern("name: CKS_UPGRADE_JOB_IMAGE_PULL_SECRETS\\s+value: \"mirror,mirror-2\"")
                .containsPattern("name: CKS_UPGRADE_JOB_CPU_REQUEST\\s+value: \"100m\"")
                .containsPattern("name: CKS_UPGRADE_JOB_MEMORY_REQUEST\\s+value: \"64Mi\"");
        assertThat(rendered("r", "--show-only", "templates/deployment.yaml")).doesNotContain("CKS_UPGRADE_JOB_IMAGE_PULL_SECRETS",
                "CKS_UPGRADE_JOB_CPU_REQUEST", "CKS_UPGRADE_JOB_MEMORY_REQUEST");
        assertThat(template("--set", "upgrade.jobResources.limits.memory=1Gi").output()).contains("additional properties 'limits' not allowed");
        assertThat(template("--set", "upgrade.jobResources.requests.cpu=lots").output()).contains("does not match pattern");
    }

    @Test
    void anExistingServiceAccountIsBoundInsteadOfCreated() throws Exception {
        String rendered = rendered("r", "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=platform-operator");
        assertThat(rendered).doesNotContainPattern("(?m)^kind: ServiceAccount$").contains("serviceAccountName: platform-operator");
        assertThat(java.util.regex.Pattern.compile("kind: ServiceAccount\\s+name: platform-operator").matcher(rendered).results().count())
                .as("every binding names it").isEqualTo(4);
        assertThat(template("--set", "serviceAccount.create=false").output()).contains("serviceAccount.name is required");
        assertThat(rendered("r", "--set", "serviceAccount.annotations.owner=ops")).contains("owner: ops");
    }

    @Test
    void monitoringObjectsCarryTheLabelsPrometheusSelectsBy() throws Exception {
        String rendered = rendered("r", "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
                "--set", "metrics.serviceMonitor.labels.release=kube-prometheus-stack", "--set", "metrics.prometheusRule.labels.release=kube-prometheus-stack");
        assertThat(rendered.split("release: kube-prometheus-stack").length - 1).isEqualTo(2);
    }

    @Test
    void upgradeScriptsBecomeAConfigMapAndTheOperatorGetsTheirDigests() throws Exception {
        String rendered = rendered("r", "--set-string", "upgrade.scripts.kubeadm=#!/bin/sh\nkubeadm upgrade node\n");
        assertThat(rendered).contains("name: r-cks-node-operator-upgrade-scripts", "name: CKS_UPGRADE_SCRIPT_SHA256",
                dev.cks.nodeops.upgrade.ScriptTrust.sha256("#!/bin/sh\nkubeadm upgrade node\n"));
        assertThat(rendered("r")).doesNotContain("upgrade-scripts", "CKS_UPGRADE_SCRIPT_SHA256");
    }

    @Test
    void theNodeUpgradeAuthorRoleIsNotAggregatedIntoAdminOrEdit() throws Exception {
        String role = rendered("r", "--show-only", "templates/nodeupgrade-author-role.yaml");
        assertThat(role).contains("kind: ClusterRole", "name: r-cks-node-operator-nodeupgrade-author", "nodeupgrades")
                .doesNotContain("rbac.authorization.k8s.io/aggregate-to");
    }

    @Test
    void helmTestIsAJobHookThatAsksForReadiness() throws Exception {
        String test = rendered("r", "--show-only", "templates/tests/test-ready.yaml");
        assertThat(test).contains("helm.sh/hook: test", "kind: Job", "/q/health/ready",
                "$(R_CKS_NODE_OPERATOR_METRICS_SERVICE_HOST):$(R_CKS_NODE_OPERATOR_METRICS_SERVICE_PORT_HTTP)");
        assertThat(test).as("the test pod is not one the operator's Service, PDB or Deployment selects")
                .contains("app.kubernetes.io/name: cks-node-operator-test");
    }

    private static String rendered(String release, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("template", release, CHART, "--kube-version", "v1.35.4"));
        all.addAll(List.of(args));
        Result result = helm(all.toArray(String[]::new));
        assertThat(result.exitCode()).as(result.output()).isZero();
        return result.output();
    }

    private static Result template(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("template", "t", CHART));
        if (List.of(args).stream().noneMatch("--kube-version"::equals)) {
            all.addAll(List.of("--kube-version", "v1.35.4"));
        }
        all.addAll(List.of(args));
        Result result = helm(all.toArray(String[]::new));
        assertThat(result.exitCode()).as("helm %s should fail", all).isNotZero();
        return result;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result helm(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(helm));
        command.addAll(List.of(args));
        return run(command);
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(20, TimeUnit.MINUTES)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
