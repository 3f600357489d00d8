package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;

class DrainOptionsTest {
    @Test
    void drainOptionsTakeTheSettingsWhereTheResourceLeavesThemUnset() {
        OperatorSettings.Drain defaults = new OperatorSettings.Drain() {
            public int timeoutSeconds() { return 120; }
            public int retries() { return 4; }
            public int retryIntervalSeconds() { return 7; }
        };
        DrainOptions fromSpec = new DrainOptions();
        fromSpec.setTimeoutSeconds(null);
        fromSpec.setRetries(1);
        fromSpec.setRetryIntervalSeconds(null);
        fromSpec.setForce(true);
        fromSpec.setSelector(new LabelSelectorBuilder().addToMatchLabels("app", "web").build());
        fromSpec.setPodSelector("tier!=cache");

        DrainOptions effective = DrainOptions.effective(fromSpec, defaults);

        assertThat(effective.getTimeoutSeconds()).isEqualTo(120);
        assertThat(effective.getRetries()).isEqualTo(1);
        assertThat(effective.getRetryIntervalSeconds()).isEqualTo(7);
        assertThat(effective.getForce()).isTrue();
        assertThat(effective.getSelector()).isEqualTo(fromSpec.getSelector());
        assertThat(effective.getPodSelector()).isEqualTo("tier!=cache");
        assertThat(DrainOptions.effective(null, defaults).attempts()).isEqualTo(5);
    }}
