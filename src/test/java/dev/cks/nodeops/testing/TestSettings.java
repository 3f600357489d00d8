package dev.cks.nodeops.testing;

import java.util.Optional;

import dev.cks.nodeops.common.OperatorSettings;

/** The operator's settings with their documented defaults, for tests without Quarkus. */
public final class TestSettings implements OperatorSettings {
    public static final String NAMESPACE = "cks-node-operator";

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    @Override
    public Drain drain() {
        return new Drain() {
            @Override
            public int timeoutSeconds() {
                return 300;
            }

            @Override
            public int retries() {
                return 2;
            }

            @Override
            public int retryIntervalSeconds() {
                return 30;
            }
        };
    }

    @Override
    public Audit audit() {
        return new Audit() {
            @Override
            public boolean enabled() {
                return true;
            }

            @Override
            public int intervalSeconds() {
                return 300;
            }

            @Override
            public int graceSeconds() {
                return 900;
            }
        };
    }

    @Override
    public CloudStack cloudstack() {
        return new CloudStack() {
            @Override
            public String secretNamespace() {
                return "kube-system";
            }

            @Override
            public String secretName() {
                return "cloudstack-secret";
            }

            @Override
            public Optional<String> clusterId() {
                return Optional.empty();
            }
        };
    }

    @Override
    public Upgrade upgrade() {
        return () -> "busybox:1.37";
    }

    @Override
    public LeaderElection leaderElection() {
        return Optional::empty;
    }
}
