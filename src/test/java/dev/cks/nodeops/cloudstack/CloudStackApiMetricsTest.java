package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class CloudStackApiMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ManualTime time = new ManualTime();
    private final CloudStackSimulator simulator = CloudStackSimulator.start(0, time);

    @AfterEach
    void stop() {
        simulator.close();
    }

    /** As CloudStackAccess does it: one set of metrics, a client built again for the keys after each change of the Secret. */
    @Test
    void theRejectedKeysGaugeFollowsTheClientBuiltAfterAKeyRotation() {
        CloudStackApiMetrics metrics = new CloudStackApiMetrics(registry);
        assertThat(rejected()).isZero();
        CloudStackCredentials right = simulator.credentials();
        CloudStackCredentials wrong = CloudStackCredentials.of(right.apiUrl(), right.apiKey(), right.secretKey() + "-wrong");

        assertThatThrownBy(client(metrics, wrong)::listKubernetesSupportedVersions).isInstanceOf(CloudStackException.class);
        assertThat(rejected()).as("CloudStack refused the keys").isEqualTo(1);

        client(metrics, right).listKubernetesSupportedVersions();
        assertThat(rejected()).as("the rotated keys were accepted").isZero();
        assertThat(registry.find(CloudStackApiMetrics.CREDENTIALS_REJECTED).gauges()).hasSize(1);
    }

    /** Each set of metrics keeps its own state: nothing is shared through the JVM between registries (or tests). */
    @Test
    void metricsOfAnotherRegistryDoNotMoveThisGauge() {
        new CloudStackApiMetrics(registry);
        CloudStackApiMetrics other = new CloudStackApiMetrics(new SimpleMeterRegistry());

        other.recordError("listKubernetesClusters", CloudStackException.UNAUTHORIZED);

        assertThat(rejected()).isZero();
    }

    private CloudStackClient client(CloudStackApiMetrics metrics, CloudStackCredentials credentials) {
        return new CloudStackClient(credentials, CloudStackClientSettings.DEFAULTS, metrics, time, time, () -> 0.5);
    }

    private double rejected() {
        return registry.get(CloudStackApiMetrics.CREDENTIALS_REJECTED).gauge().value();
    }
}
