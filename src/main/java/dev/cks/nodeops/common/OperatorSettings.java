package dev.cks.nodeops.common;

import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Global settings (Helm values become these properties); CRs override them where it makes sense. */
@ConfigMapping(prefix = "cks")
public interface OperatorSettings {
    /** The namespace the operator runs in: its Lease, upgrade Jobs and their ConfigMaps live there. */
    @WithDefault("cks-node-operator")
    String namespace();

    Drain drain();

    Audit audit();

    CloudStack cloudstack();

    Upgrade upgrade();

    LeaderElection leaderElection();

    Estimate estimate();

    /**
     * What a node's work is taken to last before this operation has finished one of that kind itself
     * (docs/eta.md): the estimate of a run's finish starts from these and moves to the run's own measured
     * times as its nodes finish. The defaults are those of a CKS cluster on ordinary hardware: a
     * `kubeadm upgrade apply` with its image pulls, a worker drained and upgraded in a few minutes.
     */
    interface Estimate {
        /** A control-plane node of a NodeUpgrade: cordon, drain, upgrade Job, Ready at the target. */
        @WithDefault("900")
        int controlPlaneUpgradeSeconds();

        /** A worker of a NodeUpgrade, the same steps. */
        @WithDefault("360")
        int workerUpgradeSeconds();

        /** The drain of one node of a ScaleDown. */
        @WithDefault("120")
        int drainSeconds();

        /** The removal of a ScaleDown's nodes through CloudStack, all of them together. */
        @WithDefault("300")
        int removalSeconds();
    }

    /**
     * The leader Lease. The leader keeps leading while it fails to renew for up to renewDeadlineSeconds,
     * so an API-server outage shorter than that (the ~90 s of `kubeadm upgrade apply` on a single
     * control plane) costs no failover; then it stops at once. Another replica takes the Lease only
     * leaseDurationSeconds after its last renewal, so the two never work at the same time.
     */
    interface LeaderElection {
        /** This replica's name in the Lease; the chart sets the pod's name. */
        Optional<String> identity();

        @WithDefault("150")
        int leaseDurationSeconds();

        @WithDefault("120")
        int renewDeadlineSeconds();

        @WithDefault("5")
        int retryPeriodSeconds();
    }

    interface Drain {
        /** Timeout of one drain attempt when a CR does not set one. */
        @WithDefault("300")
        int timeoutSeconds();

        @WithDefault("2")
        int retries();

        @WithDefault("30")
        int retryIntervalSeconds();
    }

    interface Audit {
        /** A global switch: false stops every VMMapAudit. */
        @WithDefault("true")
        boolean enabled();

        @WithDefault("300")
        int intervalSeconds();

        @WithDefault("900")
        int graceSeconds();
    }

    interface CloudStack {
        /** The Secret with the API URL and keys; CKS's cloud controller manager has one already. */
        @WithDefault("kube-system")
        String secretNamespace();

        @WithDefault("cloudstack-secret")
        String secretName();

        /** The CKS cluster's id; empty finds it by the cluster's node names. */
        Optional<String> clusterId();

        /**
         * How long a signed request stays valid: requests carry {@code expires} this far ahead
         * (signatureVersion 3), and CloudStack refuses one past it, so a leaked URL soon stops working.
         * It is also how long a write whose answer was lost may still be taken by CloudStack: the operator
         * sends such a write again only after this plus {@link #signatureExpiryMarginSeconds} (the same
         * setting signs and waits, see CloudStackClientSettings#unansweredWriteWindow). Ten minutes leaves
         * room for a slow proxy or a queued request and keeps that wait short. 0 sends plain signatures
         * (a server older than 4.1, or a clock too far off), and an unanswered write is then awaited 15 minutes.
         * Unset: CloudStackClientSettings.DEFAULTS (600), the one place the production default is kept.
         */
        Optional<Integer> signatureLifetimeSeconds();

        /**
         * Added to the signature lifetime before a write that left no trace is sent again: a request is signed a
         * moment after its time is recorded (the status write before it, retries of a request that never left),
         * and CloudStack's clock may run behind ours. Unset: CloudStackClientSettings.DEFAULTS (90).
         */
        Optional<Integer> signatureExpiryMarginSeconds();
    }

    interface Upgrade {
        /**
         * Image of the upgrade Jobs: it needs only a shell, nsenter, sha256sum and cut; the work runs in the
         * host's namespaces. Pinned by digest, so what runs as root on the nodes cannot change under a tag.
         */
        @WithDefault(DEFAULT_JOB_IMAGE)
        String jobImage();

        /** Secrets (in the operator's namespace) for pulling {@link #jobImage()} from a private registry or mirror. */
        Optional<java.util.List<String>> jobImagePullSecrets();

        /**
         * CPU and memory the upgrade Job's container requests, so a quota or LimitRange in the operator's namespace
         * admits it. No limits: kubeadm and the image pulls it starts run in the container's cgroup.
         */
        Optional<String> jobCpuRequest();

        Optional<String> jobMemoryRequest();

        /** The sha256 (hex) of every upgrade script the Script executor may run; the chart computes them from upgrade.scripts. */
        Optional<java.util.Set<String>> scriptSha256();

        /**
         * Whether a CloudStackIso NodeUpgrade checks the target's ISO on its first node before any cordon (the ISO canary,
         * docs/upgrade.md). Off only where no pod log can be read (the canary's verdict is its Job's log): then a bad ISO
         * is found by the first node's upgrade Job, after its drain.
         */
        @WithDefault("true")
        boolean isoCanary();
    }

    String DEFAULT_JOB_IMAGE = "busybox:1.37@sha256:9db7b59979c38555a39def84a31fb98b5296952f9e3afd4f6f11f05b07adfab0";
}
