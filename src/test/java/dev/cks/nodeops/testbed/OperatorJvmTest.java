package dev.cks.nodeops.testbed;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

class OperatorJvmTest {
    @Test
    void theArchiveListsTheLibrariesAtTheApplicationsPathsAndNothingThatRestsOnTheApplicationsClasses() {
        List<String> list = List.of("# written by a training",
                "java/lang/Object id: 0",
                "io/fabric8/Client id: 1 super: 0 source: /deployments/lib/main/fabric8.jar",
                "dev/cks/nodeops/Record id: 2 super: 0 source: /deployments/app/cks-node-operator.jar",
                "dev/cks/nodeops/Settings$$CMImpl id: 3 super: 0 interfaces: 2 source: /deployments/quarkus/generated-bytecode.jar",
                "io/quarkus/Generated id: 4 super: 0 interfaces: 1 2 source: /deployments/lib/main/quarkus.jar",
                "io/fabric8/Impl id: 5 super: 1 interfaces: 1 source: /deployments/lib/main/fabric8.jar",
                "@lambda-proxy java/lang/Thread run ()V");

        assertThat(OperatorJvm.librariesOnly(list, Path.of("/build/target/quarkus-app"))).containsExactly("# written by a training",
                "java/lang/Object id: 0",
                "io/fabric8/Client id: 1 super: 0 source: /build/target/quarkus-app/lib/main/fabric8.jar",
                "io/fabric8/Impl id: 5 super: 1 interfaces: 1 source: /build/target/quarkus-app/lib/main/fabric8.jar",
                "@lambda-proxy java/lang/Thread run ()V");
    }
}
