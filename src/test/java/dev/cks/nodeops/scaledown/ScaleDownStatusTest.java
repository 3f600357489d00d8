package dev.cks.nodeops.scaledown;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * status.targetNodes is a list (#35); a ScaleDown whose status an operator before 0.3.0 wrote holds the names as one
 * comma-separated string. Shape: none (the JSON the API server hands the operator). Actor: a person upgrading the operator in
 * place while ScaleDowns exist.
 */
class ScaleDownStatusTest {
    private final KubernetesSerialization json = new KubernetesSerialization();

    private List<String> targetNodes(String statusJson) {
        return json.unmarshal("{\"apiVersion\":\"nodeops.cks.dev/v1alpha1\",\"kind\":\"ScaleDown\",\"metadata\":{\"name\":\"shrink\"},"
                + "\"status\":" + statusJson + "}", ScaleDown.class).getStatus().getTargetNodes();
    }

    @Test
    void theListIsReadAsItIs() {
        assertThat(targetNodes("{\"targetNodes\":[\"w1\",\"w2\"]}")).containsExactly("w1", "w2");
        assertThat(targetNodes("{\"targetNodes\":[]}")).isEmpty();
    }

    @Test
    void theTextAnOlderOperatorWroteIsReadAsTheNodesItNames() {
        assertThat(targetNodes("{\"targetNodes\":\"w1,w2\"}")).containsExactly("w1", "w2");
        assertThat(targetNodes("{\"targetNodes\":\"prod-node-b1\"}")).containsExactly("prod-node-b1");
        assertThat(targetNodes("{\"targetNodes\":\" w1 , w2 \"}")).containsExactly("w1", "w2");
        assertThat(targetNodes("{\"targetNodes\":\"\"}")).as("written before any node was picked").isEmpty();
    }

    @Test
    void absentOrNullIsNoNode() {
        assertThat(targetNodes("{\"phase\":\"Pending\"}")).isEmpty();
        assertThat(targetNodes("{\"targetNodes\":null}")).isEmpty();
    }

    @Test
    void itIsWrittenAsAList() {
        ScaleDownStatus status = new ScaleDownStatus();
        status.setTargetNodes(List.of("w1", "w2"));

        assertThat(json.asJson(status)).contains("\"targetNodes\":[\"w1\",\"w2\"]");
        status.setTargetNodes(List.of());
        assertThat(json.asJson(status)).as("none picked yet, or every one kept: left out, so the apply removes it").doesNotContain("targetNodes");
    }
}
