package dev.cks.nodeops.testing;

import java.time.Duration;
import java.util.Optional;

import dev.cks.nodeops.cloudstack.CloudStackAccess;
import dev.cks.nodeops.cloudstack.CloudStackClient;
import dev.cks.nodeops.cloudstack.CloudStackClientSettings;
import dev.cks.nodeops.cloudstack.CloudStackCredentials;
import dev.cks.nodeops.cloudstack.ManualTime;
import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * CloudStack for a reconciler's unit test: the project's simulator over HTTP, the real client (its
 * retries sleep on the test's clock), and a Secret the test can take away and give back.
 */
public final class SimulatedCloudStack implements AutoCloseable {
    public final CloudStackSimulator simulator;
    public final CloudStackClient client;
    private final CloudStackClient rejectedClient;
    public boolean secretMissing;
    /** The Secret holds keys CloudStack does not know: every request is refused with errorcode 401. */
    public boolean keysRejected;

    /** How long the client waits for an answer: the simulator answers in milliseconds, a test's slow answer takes longer. */
    public static final Duration READ_TIMEOUT = Duration.ofMillis(1500);

    public SimulatedCloudStack(ManualTime clock, MeterRegistry registry) {
        this.simulator = CloudStackSimulator.start(0, clock);
        CloudStackClientSettings settings = CloudStackClientSettings.DEFAULTS.withTimeouts(Duration.ofSeconds(2), READ_TIMEOUT, READ_TIMEOUT.multipliedBy(3));
        this.client = new CloudStackClient(simulator.credentials(), settings, registry, clock, clock);
        this.rejectedClient = new CloudStackClient(CloudStackCredentials.of(simulator.apiUrl(), "key-cloudstack-does-not-know", "its-secret"), settings,
                registry, clock, clock);
    }

    /** The operator's access, configured for this cluster id. */
    public CloudStackAccess access(String clusterId) {
        return new CloudStackAccess(() -> {
            if (secretMissing) {
                throw new CloudStackAccess.Unavailable("Secret kube-system/cloudstack-secret does not exist");
            }
            return keysRejected ? rejectedClient : client;
        }, Optional.of(clusterId));
    }

    @Override
    public void close() {
        simulator.close();
    }
}
