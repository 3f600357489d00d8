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
        return cloudStack(Optional.empty(), Optional.empty());
    }

    /** The CloudStack settings with their defaults, and this signature lifetime and margin (seconds) where given. */
    public static CloudStack cloudStack(Optional<Integer> signatureLifetimeSeconds, Optional<Integer> signatureExpiryMarginSeconds) {
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

            @Override
            public Optional<Integer> signatureLifetimeSeconds() {
                return signatureLifetimeSeconds;
            }

            @Override
            public Optional<Integer> signatureExpiryMarginSeconds() {
                return signatureExpiryMarginSeconds;
            }
        };
    }

    /** Scripts the Script executor may run: their sha256, as the chart lists them. */
    public final java.util.Set<String> scriptSha256 = new java.util.HashSet<>();
    public boolean isoCanary = true;

    @Override
    public Upgrade upgrade() {
        return new Upgrade() {
            @Override
            public String jobImage() {
                return OperatorSettings.DEFAULT_JOB_IMAGE;
            }

            @Override
            public Optional<java.util.List<String>> jobImagePullSecrets() {
                return Optional.empty();
            }

            @Override
            public Optional<String> jobCpuRequest() {
                return Optional.empty();
            }

            @Override
            public Optional<String> jobMemoryRequest() {
                return Optional.empty();
            }

            @Override
            public Optional<java.util.Set<String>> scriptSha256() {
                return Optional.of(scriptSha256);
            }

            @Override
            public boolean isoCanary() {
                return isoCanary;
            }
        };
    }

    @Override
    public LeaderElection leaderElection() {
        return new LeaderElection() {
            @Override
            public Optional<String> identity() {
                return Optional.empty();
            }

            @Override
            public int leaseDurationSeconds() {
                return 150;
            }

            @Override
            public int renewDeadlineSeconds() {
                return 120;
            }

            @Override
            public int retryPeriodSeconds() {
                return 5;
            }
        };
    }

    /** The estimate's priors, documented defaults unless a test changes them. */
    public int controlPlaneUpgradeSeconds = 900;
    public int workerUpgradeSeconds = 360;

    @Override
    public Estimate estimate() {
        return new Estimate() {
            @Override
            public int controlPlaneUpgradeSeconds() {
                return controlPlaneUpgradeSeconds;
            }

            @Override
            public int workerUpgradeSeconds() {
                return workerUpgradeSeconds;
            }

            @Override
            public int drainSeconds() {
                return 120;
            }

            @Override
            public int removalSeconds() {
                return 300;
            }
        };
    }
}
