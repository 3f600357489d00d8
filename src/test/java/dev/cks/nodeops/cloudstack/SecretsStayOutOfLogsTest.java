package dev.cks.nodeops.cloudstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Fault;
import dev.cks.nodeops.cloudstack.simulator.JobOutcome;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import dev.cks.nodeops.cloudstack.simulator.SimulatedCluster;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import org.jboss.logmanager.ExtLogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Runs succeeding and failing calls with every log level on and searches all output for the keys. */
class SecretsStayOutOfLogsTest {

    /** An HMAC-SHA1 signature in Base64 is 27 characters plus one '=' of padding. */
    private static final Pattern SIGNATURE_LIKE = Pattern.compile("[A-Za-z0-9+/]{27}=");

    private final List<String> captured = new ArrayList<>();
    private final Logger clientLogger = Logger.getLogger("dev.cks.nodeops.cloudstack");
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            String message = record instanceof ExtLogRecord ext ? ext.getFormattedMessage() : record.getMessage();
            synchronized (captured) {
                captured.add(record.getLevel() + " " + message);
                if (record.getThrown() != null) {
                    captured.add(stackTrace(record.getThrown()));
                }
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private Level previousLevel;

    private final ManualTime time = new ManualTime();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private CloudStackSimulator simulator;
    private String apiKey;
    private String secretKey;

    @BeforeEach
    void captureEverything() {
        previousLevel = clientLogger.getLevel();
        clientLogger.setLevel(Level.ALL);
        capture.setLevel(Level.ALL);
        clientLogger.addHandler(capture);
        simulator = CloudStackSimulator.start(0, time);
        apiKey = simulator.defaultAccount().apiKey();
        secretKey = simulator.defaultAccount().secretKey();
    }

    @AfterEach
    void restore() {
        clientLogger.removeHandler(capture);
        clientLogger.setLevel(previousLevel);
        simulator.close();
    }

    private static String stackTrace(Throwable thrown) {
        StringWriter text = new StringWriter();
        thrown.printStackTrace(new PrintWriter(text));
        return text.toString();
    }

    @Test
    void keysAndSignaturesAppearNowhere() {
        List<String> texts = new ArrayList<>();
        CloudStackClient client = new CloudStackClient(simulator.credentials(),
                CloudStackClientSettings.DEFAULTS.withTimeouts(Duration.ofSeconds(2), Duration.ofMillis(300), Duration.ofSeconds(5)),
                registry, time, time, () -> 0.5);
        SimulatedCluster cluster = simulator.addCluster("prod", 1, 2);

        // Succeeding reads and an async write, logged at DEBUG.
        client.findKubernetesCluster(cluster.id());
        client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER).withKeyword("prod"));
        client.destroyVirtualMachine(simulator.addVm("standalone", Owner.of(simulator.defaultAccount())).id());
        // Retried reads, logged at WARN: server error, dropped connection, timeout.
        simulator.injectFault("listVirtualMachines", Fault.serverError(), Fault.droppedConnection(), Fault.slow(Duration.ofMillis(800)));
        client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER));
        // A server error text that echoes the credentials back.
        simulator.injectFault("listKubernetesSupportedVersions", new Fault.ApiErrorAnswer(431, 9999,
                "bad request apikey=" + apiKey + "&signature=abc, secret " + secretKey));
        texts.add(failureText(() -> client.listKubernetesSupportedVersions()));
        // A failed job, a wrong secret, an unreachable server.
        simulator.planJob("scaleKubernetesCluster", JobOutcome.fails(530, "cannot scale with key " + apiKey));
        texts.add(failureText(() -> client.scaleKubernetesCluster(cluster.id(), List.of(cluster.vmIds().get(1)))));
        CloudStackCredentials wrongSecret = CloudStackCredentials.of(simulator.apiUrl(), apiKey, secretKey + "-wrong");
        texts.add(failureText(() -> new CloudStackClient(wrongSecret, CloudStackClientSettings.DEFAULTS, registry, time, time)
                .listKubernetesSupportedVersions()));
        String closed;
        try (CloudStackSimulator gone = CloudStackSimulator.start()) {
            closed = gone.apiUrl();
        }
        texts.add(failureText(() -> new CloudStackClient(CloudStackCredentials.of(closed, apiKey, secretKey),
                CloudStackClientSettings.DEFAULTS, registry, time, time).destroyVirtualMachine("vm")));
        texts.add(simulator.credentials().toString());
        for (Meter meter : registry.getMeters()) {
            texts.add(meter.getId().toString());
        }
        synchronized (captured) {
            texts.addAll(captured);
        }

        assertThat(captured).as("the calls were logged at all").anyMatch(line -> line.startsWith("DEBUG"))
                .anyMatch(line -> line.startsWith("WARN"));
        assertThat(texts).as("some text mentioned the echoed credentials, masked").anyMatch(text -> text.contains("apikey=***"));
        assertThat(texts).allSatisfy(text -> {
            assertThat(text).doesNotContain(apiKey).doesNotContain(secretKey);
            assertThat(SIGNATURE_LIKE.matcher(text).find()).as("signature-like text in: %s", text).isFalse();
        });
    }

    private static String failureText(Runnable call) {
        CloudStackException failure = catchThrowableOfType(CloudStackException.class, call::run);
        assertThat(failure).isNotNull();
        return failure.getMessage() + "\n" + failure + "\n" + stackTrace(failure);
    }
}
