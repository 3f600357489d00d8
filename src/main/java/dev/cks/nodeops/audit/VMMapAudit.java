package dev.cks.nodeops.audit;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

@Group("nodeops.cks.dev")
// `kubectl get nodeops` lists every NodeUpgrade, ScaleDown and VMMapAudit.
@Categories("nodeops")
@Version("v1alpha1")
@ShortNames("vma")
@AdditionalPrinterColumn(name = "In Sync", jsonPath = ".status.conditions[?(@.type==\"InSync\")].status", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Findings", jsonPath = ".status.findingCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Last Run", jsonPath = ".status.lastRun.startedAt", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Message", jsonPath = ".status.message", type = AdditionalPrinterColumn.Type.STRING, priority = 1)
public class VMMapAudit extends CustomResource<VMMapAuditSpec, VMMapAuditStatus> {
    // Overridden for their descriptions in the CRD (`kubectl explain`); the kind's own is CrdPostProcessor's.
    @Override
    @JsonPropertyDescription("Which CKS cluster to audit, how often, and how findings are reported; every field may change, and the next run uses it.")
    public VMMapAuditSpec getSpec() {
        return super.getSpec();
    }

    @Override
    @JsonPropertyDescription("What the last runs found, written only by the operator: the findings, their counts, the last run, and conditions (InSync, CloudStackReachable).")
    public VMMapAuditStatus getStatus() {
        return super.getStatus();
    }
}
