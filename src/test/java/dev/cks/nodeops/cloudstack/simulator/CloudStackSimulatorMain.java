package dev.cks.nodeops.cloudstack.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the simulator for a demo until the process is stopped:
 * {@code CloudStackSimulatorMain [--port 8080] [--seed seed.json]}. The seed names the account's
 * keys, supported versions and clusters (see {@code simulator/demo-seed.json} in the test resources).
 */
public final class CloudStackSimulatorMain {

    private CloudStackSimulatorMain() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        int port = 8080;
        JsonNode seed = new ObjectMapper().createObjectNode();
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--seed" -> seed = new ObjectMapper().readTree(Files.readString(Path.of(args[i + 1])));
                default -> throw new IllegalArgumentException("usage: CloudStackSimulatorMain [--port N] [--seed file.json]");
            }
        }
        CloudStackSimulator simulator = startSeeded(port, seed);
        System.out.println("CloudStack simulator listening on " + simulator.apiUrl()
                + " (keys as given in the seed; Ctrl-C stops it)");
        new CountDownLatch(1).await();
    }

    /**
     * Seed format: {@code {"apiKey": "...", "secretKey": "...", "versions": ["1.33.1"],
     * "clusters": [{"name": "demo", "controlNodes": 1, "workers": 3}], "standaloneVms": 2, "jobSeconds": 3}}.
     */
    public static CloudStackSimulator startSeeded(int port, JsonNode seed) {
        CloudStackSimulator simulator = CloudStackSimulator.start(port, Clock.systemUTC());
        SimulatedAccount account = simulator.defaultAccount();
        if (seed.hasNonNull("apiKey") && seed.hasNonNull("secretKey")) {
            account = simulator.addAccount(seed.path("account").asText("demo"), CloudStackSimulator.ROOT_DOMAIN_ID,
                    seed.get("apiKey").asText(), seed.get("secretKey").asText(), true);
        }
        if (seed.has("jobSeconds")) {
            simulator.setDefaultJobOutcome(new JobOutcome.SucceedsAfter(java.time.Duration.ofSeconds(seed.get("jobSeconds").asLong())));
        }
        for (JsonNode version : seed.path("versions")) {
            simulator.addSupportedVersion(version.asText());
        }
        for (JsonNode cluster : seed.path("clusters")) {
            simulator.addCluster(cluster.path("name").asText("demo"), Owner.of(account),
                    cluster.path("controlNodes").asInt(1), cluster.path("workers").asInt(2));
        }
        for (int i = 0; i < seed.path("standaloneVms").asInt(0); i++) {
            simulator.addVm("standalone-" + (i + 1), Owner.of(account));
        }
        return simulator;
    }
}
