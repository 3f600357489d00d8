package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Least privilege, proven from the calls the operator made: every IT runs the operator as the chart's
 * ServiceAccount with the chart's RBAC ({@link TestBed#operatorKubeconfig}), and the bed's API server
 * audits every request of the ServiceAccounts in the operator's namespaces. This class runs after all
 * others ({@code JudgesRunLast}) and compares those calls with the RBAC the chart renders by
 * default: it fails on any call that was refused or that no rule grants, and on any grant no call used
 * (unless it is listed in {@link #NOT_PLAYED_BY_THE_BED} with the reason the bed cannot exercise it).
 */
@ExtendWith(TestBedExtension.class)
class LeastPrivilegeIT {
    private static final String OPERATOR_NAMESPACE = "$operator-namespace";
    private static final String CLOUDSTACK_SECRET = "$cloudstack-secret";
    private static final String CLUSTER_WIDE = "*";

    private static final String RACE_WITH_THE_GARBAGE_COLLECTOR = "JOSDK reads the object again when its finalizer removal "
            + "was refused (422) because the garbage collector had removed its own finalizer (foregroundDeletion, orphan) "
            + "meanwhile: a race NodeUpgradeIT's deletions in every cascade play only sometimes (refused in a CI run while the "
            + "grant was missing)";

    /** Grants the code needs that no call of the suite may use, each with the reason. */
    static final Map<String, String> NOT_PLAYED_BY_THE_BED = Map.of(
            "update coordination.k8s.io/leases in " + OPERATOR_NAMESPACE, "never called (renewals are patches), but JOSDK refuses "
                    + "to start unless a SelfSubjectRulesReview lists it (LeaderElectionManager.checkLeaseAccess)",
            "get nodeops.cks.dev/nodeupgrades", RACE_WITH_THE_GARBAGE_COLLECTOR,
            "get nodeops.cks.dev/scaledowns", RACE_WITH_THE_GARBAGE_COLLECTOR,
            "get pods/log in " + OPERATOR_NAMESPACE, "the log tail of a failed upgrade Job's pod: KWOK's pods write no log, and the "
                    + "bed's failed Jobs have no pod (PodsHeldOffNode)");

    /** What Kubernetes grants every authenticated user (system:basic-user, system:discovery). */
    private static final Set<String> DEFAULT_GRANTS = Set.of("create authorization.k8s.io/selfsubjectaccessreviews",
            "create authorization.k8s.io/selfsubjectrulesreviews", "create authentication.k8s.io/selfsubjectreviews");

    /** One API call, with the namespace of the operator and the name of the CloudStack Secret made generic. */
    record Call(String verb, String group, String resource, String namespace, String name, int code) {
        String key() {
            return verb + " " + (group.isEmpty() ? "" : group + "/") + resource + (namespace == null ? "" : " in " + namespace)
                    + (name == null ? "" : " " + name);
        }
    }

    /** One verb on one resource, as a rule of a Role (in its namespace) or ClusterRole (everywhere) grants it. */
    record Grant(String scope, String group, String resource, String verb, List<String> resourceNames) {
        boolean covers(Call call) {
            return (scope.equals(CLUSTER_WIDE) || scope.equals(call.namespace())) && group.equals(call.group())
                    && resource.equals(call.resource()) && verb.equals(call.verb())
                    && (resourceNames.isEmpty() || resourceNames.contains(call.name()));
        }

        String key() {
            return verb + " " + (group.isEmpty() ? "" : group + "/") + resource + (scope.equals(CLUSTER_WIDE) ? "" : " in " + scope)
                    + (resourceNames.isEmpty() ? "" : " " + resourceNames);
        }
    }

    @Test
    void everyCallWasGrantedAndEveryGrantWasUsed(TestBed bed) throws IOException {
        // Every fork's bed: the classes of the suite ran on them.
        List<Path> auditLogs = bed.bedsOfTheRun().stream().map(TestBed::auditLog).toList();
        List<Call> calls = new ArrayList<>();
        for (Path auditLog : auditLogs) {
            calls.addAll(operatorCalls(auditLog));
        }
        assertThat(calls).as("calls of the operator's ServiceAccounts in %s: this test judges the calls of the whole IT suite "
                + "and must run with it (./mvnw verify)", auditLogs).isNotEmpty();
        List<Grant> grants = chartGrants(bed);

        Map<String, Long> refused = calls.stream().filter(c -> c.code() == 403)
                .collect(Collectors.groupingBy(Call::key, TreeMap::new, Collectors.counting()));
        Map<String, Long> ungranted = calls.stream().filter(c -> grants.stream().noneMatch(g -> g.covers(c)))
                .filter(c -> !DEFAULT_GRANTS.contains(c.verb() + " " + c.group() + "/" + c.resource()))
                .collect(Collectors.groupingBy(Call::key, TreeMap::new, Collectors.counting()));
        Map<String, Long> uses = new TreeMap<>();
        grants.forEach(g -> uses.put(g.key(), calls.stream().filter(c -> c.code() != 403 && g.covers(c)).count()));
        Set<String> unused = uses.entrySet().stream().filter(e -> e.getValue() == 0).map(Map.Entry::getKey)
                .filter(k -> !NOT_PLAYED_BY_THE_BED.containsKey(k)).collect(Collectors.toCollection(TreeSet::new));
        writeReport(bed, calls.size(), uses, refused, ungranted);

        assertThat(refused).as("calls the API server refused (403) to the operator").isEmpty();
        assertThat(ungranted).as("calls no rule of the chart grants").isEmpty();
        assertThat(unused).as("grants of the chart that no call of the whole IT suite used: remove them, or say in "
                + "NOT_PLAYED_BY_THE_BED why the bed cannot exercise them").isEmpty();
        assertThat(NOT_PLAYED_BY_THE_BED.keySet()).as("exemptions name grants the chart has").allMatch(uses::containsKey);
    }

    private static List<Call> operatorCalls(Path auditLog) throws IOException {
        assertThat(auditLog).as("the bed's audit log (the bed starts with %s)", "TESTBED_AUDIT_POLICY").exists();
        ObjectMapper json = new ObjectMapper();
        Set<String> secrets = TestBed.grantedSecrets();
        List<Call> calls = new ArrayList<>();
        for (String line : Files.readAllLines(auditLog)) {
            JsonNode event = json.readTree(line);
            String user = event.path("user").path("username").asText();
            JsonNode ref = event.path("objectRef");
            if (!user.startsWith("system:serviceaccount:") || ref.isMissingNode()) {
                continue; // non-resource URLs (discovery, /version): every authenticated user may read them
            }
            String ownNamespace = user.split(":")[2];
            String namespace = ref.hasNonNull("namespace") ? ref.get("namespace").asText() : null;
            String name = ref.hasNonNull("name") ? ref.get("name").asText() : null;
            String resource = ref.path("resource").asText() + (ref.hasNonNull("subresource") ? "/" + ref.get("subresource").asText() : "");
            if (resource.equals("secrets") && secrets.contains(namespace + "/" + name)) {
                name = CLOUDSTACK_SECRET;
            }
            calls.add(new Call(event.path("verb").asText(), ref.path("apiGroup").asText(""), resource,
                    ownNamespace.equals(namespace) ? OPERATOR_NAMESPACE : namespace, name, event.path("responseStatus").path("code").asInt()));
        }
        return calls;
    }

    /** The rules of the Roles and ClusterRoles the chart binds to its ServiceAccount, with its default values. */
    private static List<Grant> chartGrants(TestBed bed) {
        String rendered = bed.tool("helm", "template", TestBed.OPERATOR_SERVICE_ACCOUNT, "deploy/helm/cks-node-operator", "-n", "chart-namespace", "--kube-version", bed.serverVersion(),
                "--set", "cloudstack.secretName=" + CLOUDSTACK_SECRET);
        KubernetesSerialization yaml = new KubernetesSerialization();
        List<GenericKubernetesResource> objects = new ArrayList<>();
        for (String document : rendered.split("(?m)^---\\s*$")) {
            if (document.contains("kind:")) {
                objects.add(yaml.unmarshal(document, GenericKubernetesResource.class));
            }
        }
        Set<String> boundRoles = new TreeSet<>();
        for (GenericKubernetesResource binding : objects) {
            if (binding.getKind().endsWith("Binding") && String.valueOf(binding.getAdditionalProperties().get("subjects"))
                    .contains("name=" + TestBed.OPERATOR_SERVICE_ACCOUNT + ",")) {
                Map<?, ?> roleRef = (Map<?, ?>) binding.getAdditionalProperties().get("roleRef");
                String scope = binding.getKind().equals("ClusterRoleBinding") ? CLUSTER_WIDE : binding.getMetadata().getNamespace();
                boundRoles.add(roleRef.get("kind") + "/" + roleRef.get("name") + "@" + scope);
            }
        }
        List<Grant> grants = new ArrayList<>();
        for (GenericKubernetesResource role : objects) {
            if (!role.getKind().equals("Role") && !role.getKind().equals("ClusterRole")) {
                continue;
            }
            String namespace = role.getMetadata().getNamespace();
            String scope = namespace == null ? CLUSTER_WIDE : namespace.equals("chart-namespace") ? OPERATOR_NAMESPACE : namespace;
            if (!boundRoles.contains(role.getKind() + "/" + role.getMetadata().getName() + "@" + (namespace == null ? CLUSTER_WIDE : namespace))) {
                continue; // e.g. the NodeUpgrade author role, which is for people
            }
            for (Object ruleObject : (List<?>) role.getAdditionalProperties().get("rules")) {
                Map<?, ?> rule = (Map<?, ?>) ruleObject;
                List<String> names = rule.get("resourceNames") == null ? List.of() : ((List<?>) rule.get("resourceNames")).stream().map(String::valueOf).toList();
                for (Object group : (List<?>) rule.get("apiGroups")) {
                    for (Object resource : (List<?>) rule.get("resources")) {
                        for (Object verb : (List<?>) rule.get("verbs")) {
                            grants.add(new Grant(scope, String.valueOf(group), String.valueOf(resource), String.valueOf(verb), names));
                        }
                    }
                }
            }
        }
        return grants;
    }

    private static void writeReport(TestBed bed, int callCount, Map<String, Long> uses, Map<String, Long> refused, Map<String, Long> ungranted)
            throws IOException {
        StringBuilder report = new StringBuilder("Calls of the operator's ServiceAccounts in the whole IT suite: ").append(callCount).append("\n\n");
        report.append("Grants of the chart and how many calls used each:\n");
        uses.forEach((grant, count) -> report.append(String.format("%8d  %s%s%n", count, grant,
                NOT_PLAYED_BY_THE_BED.containsKey(grant) ? "   (not played by the bed: " + NOT_PLAYED_BY_THE_BED.get(grant) + ")" : "")));
        report.append("\nRefused (403):\n");
        refused.forEach((call, count) -> report.append(String.format("%8d  %s%n", count, call)));
        report.append("\nNot granted by any rule:\n");
        ungranted.forEach((call, count) -> report.append(String.format("%8d  %s%n", count, call)));
        Files.writeString(bed.projectRoot().resolve("target/least-privilege-report.txt"), report);
        System.out.println("[least-privilege] " + report);
    }
}
