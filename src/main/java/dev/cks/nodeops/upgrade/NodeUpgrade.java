package dev.cks.nodeops.upgrade;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

@Group("nodeops.cks.dev")
// `kubectl get nodeops` lists every NodeUpgrade, ScaleDown and VMMapAudit.
@Categories("nodeops")
@Version("v1alpha1")
@ShortNames("nu")
@AdditionalPrinterColumn(name = "Target", jsonPath = ".spec.targetVersion", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Progress", jsonPath = ".status.progress", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Node", jsonPath = ".status.currentNode", type = AdditionalPrinterColumn.Type.STRING)
// When the maintenance window (spec.window) opens next; empty without a window.
@AdditionalPrinterColumn(name = "Next Window", jsonPath = ".status.window.opensAt", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Message", jsonPath = ".status.message", type = AdditionalPrinterColumn.Type.STRING, priority = 1)
// The name is written into node annotations (the lock, the cordon) and Job labels, whose values hold at most 63 characters.
@ValidationRule(value = "size(self.metadata.name) <= 63", message = "metadata.name may have at most 63 characters: it names the operation in node annotations and labels")
public class NodeUpgrade extends CustomResource<NodeUpgradeSpec, NodeUpgradeStatus> {
}
