package dev.cks.nodeops.common;

import java.util.Comparator;
import java.util.List;

import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;

/**
 * Runs at build time on the generated CRDs. The generator sorts printer columns by JSON path,
 * which would put AGE first in `kubectl get`; this puts them in the order users read them.
 */
public class PrinterColumnOrder implements CRDPostProcessor {
    private static final List<String> ORDER = List.of(
            "Target", "Nodes", "In Sync", "Findings", "Phase", "Progress", "Node", "Next Window", "Last Run", "Age", "Message");

    @Override
    public HasMetadata process(HasMetadata crd, String crdSpecVersion) {
        if (crd instanceof CustomResourceDefinition definition) {
            definition.getSpec().getVersions().forEach(version -> {
                List<CustomResourceColumnDefinition> columns = version.getAdditionalPrinterColumns();
                if (columns != null) {
                    columns.sort(Comparator.comparingInt(column -> rank(column.getName())));
                }
            });
        }
        return crd;
    }

    private static int rank(String name) {
        int index = ORDER.indexOf(name);
        return index < 0 ? ORDER.size() : index;
    }
}
