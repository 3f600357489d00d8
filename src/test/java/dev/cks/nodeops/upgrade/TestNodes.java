package dev.cks.nodeops.upgrade;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

/** Node objects as the API returns them, for pure tests. */
final class TestNodes {
    private TestNodes() {
    }

    static Node node(String name, boolean controlPlane, String created, String version, boolean ready) {
        NodeBuilder builder = new NodeBuilder().withNewMetadata().withName(name).withCreationTimestamp(created)
                .addToLabels("kubernetes.io/hostname", name).endMetadata();
        if (controlPlane) {
            builder.editMetadata().addToLabels(UpgradePlan.CONTROL_PLANE_LABEL, "").endMetadata();
        }
        return builder.withNewStatus().withNewNodeInfo().withKubeletVersion(version).endNodeInfo()
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus().build();
    }
}
