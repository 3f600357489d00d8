package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CloudConfigIniTest {

    @Test
    void readsTheGlobalSectionOfTheCcmConfig() {
        String ini = """
                ; written by CKS
                [Global]
                api-url = https://cloud.example/client/api
                api-key = "abc"
                Secret-Key=def==
                # project of the cluster
                project-id = p-1
                ssl-no-verify = true

                [Other]
                api-url = ignored
                """;

        Map<String, String> global = CloudConfigIni.section(ini, "Global");

        assertThat(global).containsExactly(
                Map.entry("api-url", "https://cloud.example/client/api"),
                Map.entry("api-key", "abc"),
                Map.entry("secret-key", "def=="),
                Map.entry("project-id", "p-1"),
                Map.entry("ssl-no-verify", "true"));
    }

    @Test
    void givesNothingForAMissingSection() {
        assertThat(CloudConfigIni.section("[Other]\na=b\n", "Global")).isEmpty();
    }
}
