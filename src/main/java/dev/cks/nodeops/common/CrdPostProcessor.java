package dev.cks.nodeops.common;

import java.util.Comparator;
import java.util.List;

import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;

/**
 * Runs at build time on the generated CRDs, for what the schema annotations cannot say: the order of
 * the printer columns (the generator sorts them by JSON path, which would put AGE first in `kubectl
 * get`), and lists of Node names that are sets (the API server refuses a name given twice, with the
 * index of the duplicate) of at most 253 characters each (a Node name's limit), and label values of
 * at most 63; both bounds also keep the cost of their CEL rules within the API server's budget.
 */
public class CrdPostProcessor implements CRDPostProcessor {
    private static final List<String> ORDER = List.of(
            "Target", "Nodes", "In Sync", "Findings", "Drainable", "Blocked", "Phase", "Progress", "Node", "Next Window", "Last Run", "Age", "Message");
    /** Spec fields listing Node names, by CRD. */
    private static final List<List<String>> NODE_NAME_SETS = List.of(List.of("scaledowns.nodeops.cks.dev", "nodeNames"));
    private static final long NODE_NAME_MAX_LENGTH = 253;
    /** Spec fields mapping label keys to values, by CRD: a label value has at most 63 characters (which also bounds their CEL rule's cost). */
    private static final List<List<String>> LABEL_MAPS = List.of(List.of("nodeupgrades.nodeops.cks.dev", "nodeSelector"),
            List.of("drainreports.nodeops.cks.dev", "nodeSelector"));
    private static final long LABEL_VALUE_MAX_LENGTH = 63;

    @Override
    public HasMetadata process(HasMetadata crd, String crdSpecVersion) {
        if (crd instanceof CustomResourceDefinition definition) {
            definition.getSpec().getVersions().forEach(version -> {
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
            });
        }
        return crd;
    }

    private static JSONSchemaProps specField(JSONSchemaProps root, String field) {
        return root.getProperties().get("spec").getProperties().get(field);
    }

    private static int rank(String name) {
        int index = ORDER.indexOf(name);
        return index < 0 ? ORDER.size() : index;
    }
}
