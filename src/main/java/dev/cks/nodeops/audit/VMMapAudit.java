package dev.cks.nodeops.audit;

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
}
