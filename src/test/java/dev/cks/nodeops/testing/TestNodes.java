package dev.cks.nodeops.testing;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.cks.nodeops.common.NodeAnnotations;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;

/** Node objects as the API returns them, for tests without a cluster: the one Node builder of the test code. */
public final class TestNodes {
    public static final String CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane";

    private TestNodes() {
    }

    /** A Ready, schedulable worker at v1.34.2 created 2026-01-01, until told otherwise. */
    public static Builder node(String name) {
        return new Builder(name);
    }

    /** The shape the upgrade tests read best: a node of this role, age, kubelet version and readiness. */
    public static Node node(String name, boolean controlPlane, String created, String version, boolean ready) {
        Builder builder = node(name).created(created).version(version).ready(ready);
        return controlPlane ? builder.controlPlane().build() : builder.build();
    }

    public static final class Builder {
        private final String name;
        private final Map<String, String> labels = new LinkedHashMap<>();
        private final Map<String, String> annotations = new LinkedHashMap<>();
        private String created = "2026-01-01T00:00:00Z";
        private String version = "v1.34.2";
        private String ready = "True";
        private boolean unschedulable;

        private Builder(String name) {
            this.name = name;
            labels.put("kubernetes.io/hostname", name);
        }

        public Builder controlPlane() {
            return label(CONTROL_PLANE_LABEL, "");
        }

        public Builder label(String key, String value) {
            labels.put(key, value);
            return this;
        }

        public Builder annotation(String key, String value) {
            annotations.put(key, value);
            return this;
        }

        public Builder lockedBy(String owner) {
            return annotation(NodeAnnotations.LOCK, owner);
        }

        public Builder created(String timestamp) {
            created = timestamp;
            return this;
        }

        public Builder version(String kubeletVersion) {
            version = kubeletVersion;
            return this;
        }

        /** "True", "False" or "Unknown"; null: no Ready condition at all. */
        public Builder ready(String status) {
            ready = status;
            return this;
        }

        public Builder ready(boolean isReady) {
            return ready(isReady ? "True" : "False");
        }

        public Builder unschedulable() {
            unschedulable = true;
            return this;
        }

        public Node build() {
            NodeBuilder node = new NodeBuilder().withNewMetadata().withName(name).withCreationTimestamp(created).withResourceVersion("1")
                    .withLabels(new LinkedHashMap<>(labels)).withAnnotations(new LinkedHashMap<>(annotations)).endMetadata()
                    .withNewSpec().withUnschedulable(unschedulable ? Boolean.TRUE : null).endSpec()
                    .withNewStatus().withNewNodeInfo().withKubeletVersion(version).endNodeInfo().endStatus();
            if (ready != null) {
                node.editStatus().addNewCondition().withType("Ready").withStatus(ready).endCondition().endStatus();
            }
            return node.build();
        }
    }
}
