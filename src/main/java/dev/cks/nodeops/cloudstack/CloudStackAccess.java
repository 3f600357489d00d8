package dev.cks.nodeops.cloudstack;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import dev.cks.nodeops.common.LeaderFence;
import dev.cks.nodeops.common.OperatorSettings;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The operator's way to CloudStack: the client built from the configured Secret (rebuilt when the
 * Secret changes, so rotated keys are picked up), and the CKS cluster this Kubernetes cluster is.
 */
@ApplicationScoped
public class CloudStackAccess {
    /** States in which CloudStack itself is changing the cluster: we wait instead of fighting it. */
    private static final Set<String> BUSY_STATES = Set.of("starting", "stopping", "scaling", "upgrading", "recovering",
            "destroying", "importing", "addingnodes", "removingnodes", "migrating");

    /**
     * CloudStack cannot be asked at all: its Secret is missing or unusable. Distinct from a CloudStack
     * answer ({@link CloudStackException}): the operation waits until the Secret is fixed.
     */
    public static final class Unavailable extends RuntimeException {
        public Unavailable(String message) {
            super(message);
        }
    }

    private static final Logger LOG = Logger.getLogger(CloudStackAccess.class);

    private final Supplier<CloudStackClient> clients;
    private final Optional<String> configuredClusterId;

    @Inject
    public CloudStackAccess(KubernetesClient kubernetes, OperatorSettings settings, MeterRegistry registry, Clock clock, LeaderFence fence) {
        this(new ClientFromSecret(kubernetes, settings.cloudstack(), registry, clock, fence), settings.cloudstack().clusterId());
    }

    /** @param clients the client to use now; throws {@link Unavailable} when there is none */
    public CloudStackAccess(Supplier<CloudStackClient> clients, Optional<String> configuredClusterId) {
        this.clients = clients;
        this.configuredClusterId = configuredClusterId;
    }

    /** The client; throws {@link Unavailable} with a sentence saying what is wrong with the Secret. */
    public CloudStackClient client() {
        return clients.get();
    }

    /** The client built from the configured Secret, rebuilt when the Secret changes, so rotated keys are picked up. */
    private static final class ClientFromSecret implements Supplier<CloudStackClient> {
        private final KubernetesClient kubernetes;
        private final OperatorSettings.CloudStack settings;
        private final CloudStackApiMetrics metrics;
        private final Clock clock;
        private final LeaderFence fence;
        private CloudStackClient client;
        private String clientSecretVersion;

        ClientFromSecret(KubernetesClient kubernetes, OperatorSettings.CloudStack settings, MeterRegistry registry, Clock clock, LeaderFence fence) {
            this.kubernetes = kubernetes;
            this.settings = settings;
            this.metrics = new CloudStackApiMetrics(registry);
            this.clock = clock;
            this.fence = fence;
        }

        @Override
        public synchronized CloudStackClient get() {
            String namespace = settings.secretNamespace();
            String name = settings.secretName();
            Secret secret = kubernetes.secrets().inNamespace(namespace).withName(name).get();
            if (secret == null) {
                throw new Unavailable("Secret " + namespace + "/" + name
                        + " with the CloudStack API URL and keys does not exist; create it (see the README) or set cloudstack.secretName");
            }
            String version = secret.getMetadata().getResourceVersion();
            if (client == null || !version.equals(clientSecretVersion)) {
                CloudStackCredentials credentials;
                try {
                    credentials = CloudStackCredentialsLoader.fromSecret(secret);
                } catch (IllegalArgumentException unusable) {
                    throw new Unavailable(unusable.getMessage());
                }
                client = new CloudStackClient(credentials, clientSettings(settings), metrics, clock, Sleeper.REAL, CloudStackClient.RANDOM_JITTER,
                        fence::beforeWrite);
                clientSecretVersion = version;
                client.plainHttpWarning().ifPresent(LOG::warn);
            }
            return client;
        }
    }

    /** The client's settings: the defaults, with the signature lifetime and its margin where they are configured. */
    static CloudStackClientSettings clientSettings(OperatorSettings.CloudStack configured) {
        CloudStackClientSettings defaults = CloudStackClientSettings.DEFAULTS;
        return defaults.withSignatureLifetime(
                configured.signatureLifetimeSeconds().map(Duration::ofSeconds).orElse(defaults.signatureLifetime()),
                configured.signatureExpiryMarginSeconds().map(Duration::ofSeconds).orElse(defaults.expiryMargin()));
    }

    public static boolean isBusy(KubernetesCluster cluster) {
        return cluster.state() != null && BUSY_STATES.contains(cluster.state().toLowerCase(Locale.ROOT));
    }

    /** Which CKS cluster this is: by id when one is set, else the one whose VM map names these nodes. */
    public ClusterResolution resolveCluster(String clusterId, Collection<String> nodeNames) {
        CloudStackClient cloudStack = client();
        String id = clusterId != null && !clusterId.isBlank() ? clusterId : configuredClusterId.orElse("");
        if (!id.isBlank()) {
            return cloudStack.findKubernetesCluster(id)
                    .map(ClusterResolution::found)
                    .orElseGet(() -> ClusterResolution.refused("CloudStack has no Kubernetes cluster with id " + id
                            + " visible to these API keys; check cloudstack.clusterId"));
        }
        List<KubernetesCluster> matching = cloudStack.listKubernetesClusters(OwnerScope.CALLER).stream()
                .filter(cluster -> cluster.virtualMachines().stream()
                        .anyMatch(vm -> nodeNames.stream().anyMatch(node -> ClusterResolution.sameHost(node, vm.name()))))
                .toList();
        return ClusterResolution.pick(matching);
    }

    /** The outcome of finding the CKS cluster: exactly one, or a refusal that says why. */
    public record ClusterResolution(Optional<KubernetesCluster> cluster, String refusal) {
        static ClusterResolution found(KubernetesCluster cluster) {
            return new ClusterResolution(Optional.of(cluster), null);
        }

        static ClusterResolution refused(String why) {
            return new ClusterResolution(Optional.empty(), why);
        }

        static ClusterResolution pick(List<KubernetesCluster> matching) {
            if (matching.size() == 1) {
                return found(matching.get(0));
            }
            if (matching.isEmpty()) {
                return refused("no CloudStack Kubernetes cluster visible to these API keys has this cluster's nodes in its VM map; "
                        + "set cloudstack.clusterId");
            }
            return refused("more than one CloudStack Kubernetes cluster has this cluster's nodes in its VM map ("
                    + String.join(", ", matching.stream().map(c -> c.name() + " " + c.id()).toList())
                    + "); set cloudstack.clusterId to the right one");
        }

        /** A node may be named by the VM's name or by its FQDN (`<vm>.<domain>`). */
        public static boolean sameHost(String nodeName, String vmName) {
            if (nodeName == null || vmName == null) {
                return false;
            }
            String node = nodeName.toLowerCase(Locale.ROOT);
            String vm = vmName.toLowerCase(Locale.ROOT);
            return node.equals(vm) || node.startsWith(vm + ".");
        }
    }
}
