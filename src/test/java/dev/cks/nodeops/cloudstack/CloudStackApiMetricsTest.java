package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

class CloudStackApiMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void theRejectedKeysGaugeFollowsTheClientBuiltAfterAKeyRotation() {
        CloudStackApiMetrics before = new CloudStackApiMetrics(registry);
        before.recordError("listKubernetesClusters", CloudStackException.UNAUTHORIZED);
        assertThat(rejected()).isEqualTo(1);

        CloudStackApiMetrics rotated = new CloudStackApiMetrics(registry);
        assertThat(registry.find(CloudStackApiMetrics.CREDENTIALS_REJECTED).gauges()).hasSize(1);
        rotated.recordRequest("listKubernetesClusters", CloudStackApiMetrics.SUCCESS, Duration.ofMillis(5));
        assertThat(rejected()).isZero();
        rotated.recordError("listKubernetesClusters", CloudStackException.UNAUTHORIZED);
        assertThat(rejected()).isEqualTo(1);
        rotated.recordRequest("listKubernetesClusters", CloudStackApiMetrics.SUCCESS, Duration.ofMillis(5));
    }

    private double rejected() {
        return registry.get(CloudStackApiMetrics.CREDENTIALS_REJECTED).gauge().value();
    }
}
