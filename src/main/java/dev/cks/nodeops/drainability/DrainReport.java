package dev.cks.nodeops.drainability;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A standing answer to "could each node be drained now, and if not, why": it predicts, and never evicts or cordons. */
@Group("nodeops.cks.dev")
@Categories("nodeops")
@Version("v1alpha1")
// Not "dr": Istio's DestinationRule has that one.
@ShortNames("drr")
@AdditionalPrinterColumn(name = "Drainable", jsonPath = ".status.drainableCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Blocked", jsonPath = ".status.blockedCount", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Last Run", jsonPath = ".status.lastRun.startedAt", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(name = "Message", jsonPath = ".status.message", type = AdditionalPrinterColumn.Type.STRING, priority = 1)
public class DrainReport extends CustomResource<DrainReportSpec, DrainReportStatus> {
}
