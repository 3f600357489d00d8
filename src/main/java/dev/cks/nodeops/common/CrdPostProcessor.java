package dev.cks.nodeops.common;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;

/**
 * Runs at build time on the generated CRDs, for what the schema annotations cannot say: the order of
 * the printer columns (the generator sorts them by JSON path, which would put AGE first in `kubectl
 * get`), and lists of Node names that are sets (the API server refuses a name given twice, with the
 * index of the duplicate) of at most 253 characters each (a Node name's limit), label values of
 * at most 63, and the sizes of node and pod label selectors; the bounds also keep the cost of their CEL rules within the API server's budget. And the
 * descriptions `kubectl explain` prints that no field of ours carries: each kind's own, its spec's and its status's
 * (inherited from Fabric8's CustomResource), and those of the fields of Kubernetes' types (Fabric8's classes have none).
 */
public class CrdPostProcessor implements CRDPostProcessor {
    private static final List<String> ORDER = List.of(
            "Target", "Nodes", "In Sync", "Findings", "Drainable", "Blocked", "Phase", "Progress", "Node", "ETA", "Next Window", "Last Run", "Age",
            "Message");
    /** Spec fields listing Node names, by CRD. */
    private static final List<List<String>> NODE_NAME_SETS = List.of(List.of("scaledowns.nodeops.cks.dev", "nodeNames"));
    private static final long NODE_NAME_MAX_LENGTH = 253;
    /** Spec fields mapping label keys to values, by CRD: a label value has at most 63 characters (which also bounds their CEL rule's cost). */
    private static final List<List<String>> LABEL_MAPS = List.of(List.of("nodeupgrades.nodeops.cks.dev", "nodeSelector"),
            List.of("drainreports.nodeops.cks.dev", "nodeSelector"));
    private static final long LABEL_VALUE_MAX_LENGTH = 63;
    /**
     * Spec fields selecting nodes or pods with a metav1.LabelSelector, by CRD, as paths under spec: bounded (which bounds the
     * cost of their CEL rules, see LabelSelectorRules) and with key and operator required, as Kubernetes' own
     * LabelSelectorRequirement has them.
     */
    private static final List<List<String>> LABEL_SELECTORS = List.of(List.of("nodeupgrades.nodeops.cks.dev", "selector"),
            List.of("drainreports.nodeops.cks.dev", "selector"), List.of("nodeupgrades.nodeops.cks.dev", "drain.selector"),
            List.of("scaledowns.nodeops.cks.dev", "drain.selector"), List.of("drainreports.nodeops.cks.dev", "drain.selector"));
    private static final long LABEL_KEY_MAX_LENGTH = 317;
    private static final long MAX_LABELS = 64;
    private static final long MAX_EXPRESSIONS = 32;
    private static final long MAX_VALUES = 64;
    /**
     * What each kind is for, and its spec and status, by CRD: the descriptions of its whole schema and of the two
     * properties its Java class inherits (`kubectl explain nu`, `kubectl explain nu.status`).
     */
    private static final Map<String, KindDescriptions> KINDS = Map.of(
            "nodeupgrades.nodeops.cks.dev", new KindDescriptions(
                    "Upgrades the Kubernetes version of the selected CKS nodes: control-plane nodes one at a time, then the workers, each"
                            + " cordoned, drained, upgraded and watched until Ready at the target. With spec.mode Continuous it then holds that version.",
                    "What to upgrade to, which nodes, how, and when. Only paused, window and maxUnavailable (and a Continuous one's"
                            + " targetVersion) may change once created.",
                    "What the operator observed and did, written only by the operator: the phase, each node's progress, and conditions"
                            + " that say what happens and why."),
            "scaledowns.nodeops.cks.dev", new KindDescriptions(
                    "Removes worker nodes from a CKS cluster: cordons them all, drains them one by one (rolling back on any failure),"
                            + " then removes their VMs through CloudStack.",
                    "Which nodes to remove, how to drain them and how CloudStack removes them. Only paused and window may change once created.",
                    "What the operator observed and did, written only by the operator: the phase, each node's progress, the removal or"
                            + " rollback, and conditions that say why."),
            "vmmapaudits.nodeops.cks.dev", new KindDescriptions(
                    "Periodically compares CloudStack's VMs and its map of the CKS cluster with the cluster's Nodes and reports each drift"
                            + " once, in status.findings and as an event; it changes nothing.",
                    "Which CKS cluster to audit, how often, and how findings are reported; every field may change, and the next run uses it.",
                    "What the last runs found, written only by the operator: the findings, their counts, the last run, and conditions"
                            + " (InSync, CloudStackReachable)."),
            "drainreports.nodeops.cks.dev", new KindDescriptions(
                    "Predicts, for every selected node, whether it could be drained now and what would block it (PodDisruptionBudgets"
                            + " with their numbers, replacements with nowhere to run, bare pods, local storage, opt-outs), on a schedule and"
                            + " when a selected Node changes; it evicts, cordons and dry-runs nothing.",
                    "Which nodes to report on, how often, and the drain options to predict with; every field may change, and the next"
                            + " pass uses it.",
                    "What the last pass found, written only by the operator: the drainable and blocked counts, the blocked nodes with"
                            + " their causes (at most 100, longest blocked first), and conditions."));
    private record KindDescriptions(String kind, String spec, String status) {
    }

    /**
     * The fields of Kubernetes' types our schemas embed (metav1.Condition, LabelSelector and its requirements), known by the
     * properties that make each up; a field that has a description keeps it.
     */
    private static final Map<Set<String>, Map<String, String>> KUBERNETES_TYPES = Map.of(
            Set.of("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"), Map.of(
                    "type", "The condition's type, e.g. Progressing.",
                    "status", "True, False or Unknown.",
                    "observedGeneration", "The metadata.generation the condition was set for.",
                    "lastTransitionTime", "When the condition last changed from one status to another.",
                    "reason", "Why the condition last changed, as one CamelCase word.",
                    "message", "What the condition says, for humans."),
            Set.of("matchLabels", "matchExpressions"), Map.of(
                    "matchLabels", "Labels a selected object (a node or a pod, as the selector's description says) must have, as key: value"
                            + " pairs; ANDed with matchExpressions.",
                    "matchExpressions", "Label requirements a selected object must all meet; ANDed with matchLabels."),
            Set.of("key", "operator", "values"), Map.of(
                    "key", "The label key the requirement is about.",
                    "operator", "In, NotIn, Exists or DoesNotExist.",
                    "values", "The label values for In and NotIn; empty for Exists and DoesNotExist."));

    @Override
    public HasMetadata process(HasMetadata crd, String crdSpecVersion) {
        if (crd instanceof CustomResourceDefinition definition) {
            definition.getSpec().getVersions().forEach(version -> {
                JSONSchemaProps root = version.getSchema().getOpenAPIV3Schema();
                KindDescriptions kind = KINDS.get(definition.getMetadata().getName());
                if (kind != null) {
                    root.setDescription(kind.kind());
                    root.getProperties().get("spec").setDescription(kind.spec());
                    root.getProperties().get("status").setDescription(kind.status());
                }
                describeKubernetesTypes(root);
                List<CustomResourceColumnDefinition> columns = version.getAdditionalPrinterColumns();
                if (columns != null) {
                    columns.sort(Comparator.comparingInt(column -> rank(column.getName())));
                }
                NODE_NAME_SETS.stream().filter(set -> set.get(0).equals(definition.getMetadata().getName())).forEach(set -> {
                    JSONSchemaProps list = specField(version.getSchema().getOpenAPIV3Schema(), set.get(1));
                    list.setXKubernetesListType("set");
                    list.getItems().getSchema().setMaxLength(NODE_NAME_MAX_LENGTH);
                });
                LABEL_MAPS.stream().filter(map -> map.get(0).equals(definition.getMetadata().getName())).forEach(map ->
                        specField(version.getSchema().getOpenAPIV3Schema(), map.get(1)).getAdditionalProperties().getSchema()
                                .setMaxLength(LABEL_VALUE_MAX_LENGTH));
                LABEL_SELECTORS.stream().filter(field -> field.get(0).equals(definition.getMetadata().getName())).forEach(field ->
                        boundLabelSelector(specField(version.getSchema().getOpenAPIV3Schema(), field.get(1))));
            });
        }
        return crd;
    }

    private static void describeKubernetesTypes(JSONSchemaProps schema) {
        if (schema == null) {
            return;
        }
        Map<String, JSONSchemaProps> properties = schema.getProperties();
        if (properties != null && !properties.isEmpty()) {
            KUBERNETES_TYPES.getOrDefault(properties.keySet(), Map.of()).forEach((field, description) -> {
                if (properties.get(field).getDescription() == null) {
                    properties.get(field).setDescription(description);
                }
            });
            properties.values().forEach(CrdPostProcessor::describeKubernetesTypes);
        }
        if (schema.getItems() != null) {
            describeKubernetesTypes(schema.getItems().getSchema());
        }
        if (schema.getAdditionalProperties() != null) {
            describeKubernetesTypes(schema.getAdditionalProperties().getSchema());
        }
    }

    private static void boundLabelSelector(JSONSchemaProps selector) {
        JSONSchemaProps labels = selector.getProperties().get("matchLabels");
        labels.setMaxProperties(MAX_LABELS);
        labels.getAdditionalProperties().getSchema().setMaxLength(LABEL_VALUE_MAX_LENGTH);
        JSONSchemaProps expressions = selector.getProperties().get("matchExpressions");
        expressions.setMaxItems(MAX_EXPRESSIONS);
        JSONSchemaProps requirement = expressions.getItems().getSchema();
        requirement.setRequired(List.of("key", "operator"));
        requirement.getProperties().get("key").setMaxLength(LABEL_KEY_MAX_LENGTH);
        JSONSchemaProps values = requirement.getProperties().get("values");
        values.setMaxItems(MAX_VALUES);
        values.getItems().getSchema().setMaxLength(LABEL_VALUE_MAX_LENGTH);
    }

    /** The schema of a field under spec, by its dotted path (e.g. drain.selector). */
    private static JSONSchemaProps specField(JSONSchemaProps root, String path) {
        JSONSchemaProps field = root.getProperties().get("spec");
        for (String name : path.split("\\.")) {
            field = field.getProperties().get(name);
        }
        return field;
    }

    private static int rank(String name) {
        int index = ORDER.indexOf(name);
        return index < 0 ? ORDER.size() : index;
    }
}
