package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    private final RetryPolicy policy = new RetryPolicy(6, Duration.ofMillis(500), Duration.ofSeconds(3), Duration.ofSeconds(30));

    @Test
    void doublesTheStepUpToTheCap() {
        assertThat(policy.backoffBefore(1, () -> 1.0)).isEqualTo(Duration.ofMillis(500));
        assertThat(policy.backoffBefore(2, () -> 1.0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(policy.backoffBefore(3, () -> 1.0)).isEqualTo(Duration.ofSeconds(2));
        assertThat(policy.backoffBefore(4, () -> 1.0)).isEqualTo(Duration.ofSeconds(3));
        assertThat(policy.backoffBefore(60, () -> 1.0)).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void jitterKeepsAtLeastHalfOfTheStep() {
        assertThat(policy.backoffBefore(3, () -> 0.0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(policy.backoffBefore(3, () -> 0.5)).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void needsAtLeastOneAttempt() {
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
