package dev.cks.nodeops.operation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.CloudStackCommand;
import dev.cks.nodeops.operation.PermissionPreflight.Need;

class PermissionPreflightTest {
    private static final Need ATTACH = Need.of(CloudStackCommand.ATTACH_ISO, "attaches the ISO");
    private static final Need DETACH = Need.of(CloudStackCommand.DETACH_ISO, "detaches it");
    private static final List<Need> NEEDS = List.of(PermissionPreflight.FIND_CLUSTER, ATTACH, DETACH, PermissionPreflight.LIST_JOBS);

    @Test
    void namesEachMissingCommandWithWhatItWouldHaveDoneAndHowToGiveOtherKeys() {
        String refusal = PermissionPreflight.refusal("NodeUpgrade to-135", NEEDS, Map.of(CloudStackCommand.LIST_KUBERNETES_CLUSTERS, true,
                CloudStackCommand.ATTACH_ISO, false, CloudStackCommand.DETACH_ISO, false, CloudStackCommand.LIST_ASYNC_JOBS, false)).orElseThrow();

        assertThat(refusal).contains("may not call attachIso (attaches the ISO), detachIso (detaches it)").contains("refuses them")
                .contains("NodeUpgrade to-135 cannot be done").contains("Nothing was cordoned")
                .contains("cloudstack.secretNamespace and cloudstack.secretName").doesNotContain("listAsyncJobs");
    }

    @Test
    void anOptionalCommandMissingIsNoRefusal() {
        assertThat(PermissionPreflight.refusal("ScaleDown s", NEEDS, Map.of(CloudStackCommand.LIST_ASYNC_JOBS, false))).isEmpty();
    }

    @Test
    void anUnknownPermissionIsNoRefusal() {
        assertThat(PermissionPreflight.refusal("ScaleDown s", NEEDS, Map.of())).isEmpty();
    }

    @Test
    void asksAboutEachCommandOnce() {
        assertThat(PermissionPreflight.commands(List.of(ATTACH, ATTACH, DETACH))).containsExactly(CloudStackCommand.ATTACH_ISO,
                CloudStackCommand.DETACH_ISO);
    }
}
