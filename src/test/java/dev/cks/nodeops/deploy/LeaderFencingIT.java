package dev.cks.nodeops.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.common.LeaderElection;
import dev.cks.nodeops.operation.KillPoint;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.scaledown.ScaleDownSpec;
import dev.cks.nodeops.scaledown.ScaleDownStatus;
import dev.cks.nodeops.testbed.CloudStackFixture;
import dev.cks.nodeops.testbed.OperatorProcess;
import dev.cks.nodeops.testbed.SkewedClock;
import dev.cks.nodeops.testbed.TestBed;
import dev.cks.nodeops.testbed.TestBedExtension;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;

/**
 * A leader that no longer holds the Lease writes nothing, and a replica whose clock is off does not take the
 * Lease from a running leader (docs/reliability.md, "Fencing"). Two operator processes, each with its own
 * ServiceAccount, so the API server's audit log tells their writes apart.
 */
@ExtendWith(TestBedExtension.class)
class LeaderFencingIT {
    private static final java.util.Set<String> WRITE_VERBS = java.util.Set.of("create", "update", "patch", "delete", "deletecollection");

    /**
     * The frozen leader is a race on the old code (docs/reliability.md, "Fencing"): the default run plays it once,
     * {@code -Dcks-test.fencing-runs=N} as often as asked (docs/testing.md), each run on nodes and a fixture of its own.
     */
    static IntStream runs() {
        return IntStream.rangeClosed(1, Integer.getInteger("cks-test.fencing-runs", 1));
    }

    /**
     * One control plane and two workers, a ScaleDown of one worker; the other actor is a second operator process.
     * The leader stops itself (SIGSTOP) right after it recorded its intent to send scaleKubernetesCluster, as in
     * a long GC pause; the standby takes the Lease, sends the scale itself once CloudStack could no longer take the
     * frozen request, and finishes. Then the old leader resumes (SIGCONT): it must halt without one more API or
     * CloudStack write, and the status it would have written over the standby's never appears.
     */
    @ParameterizedTest(name = "run {0}")
    @MethodSource("runs")
    void aLeaderResumedAfterLosingTheLeaseWritesNothingMore(int run, TestBed bed) throws Exception {
        KubernetesClient client = bed.client();
        String tag = "fence" + run;
        List<Node> nodes = new ArrayList<>(List.of(bed.addControlPlane(tag), bed.addWorker(tag), bed.addWorker(tag)));
        String leaving = nodes.get(2).getMetadata().getName();
        String name = "fenced-" + run;
        List<String> history = new CopyOnWriteArrayList<>();
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, tag, "CloudManaged", nodes)) {
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.putAll(CloudStackFixture.SHORT_SIGNATURE_LIFETIME);
            properties.put("cks.cloudstack.cluster-id", cloudStack.cluster().id());
            properties.put("cks.leader-election.identity", tag + "-a");
            properties.put(KillPoint.PAUSE_PROPERTY, KillPoint.SCALEDOWN_SCALE_INTENT.pointName());
            String leaderAccount = "fence-a";
            OperatorProcess leader = OperatorProcess.start(bed, bed.operatorKubeconfig(properties, leaderAccount), tag + "-a", properties);
            try {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> (tag + "-a").equals(LeaderElectionIT.holder(client)));
                properties.remove(KillPoint.PAUSE_PROPERTY);
                properties.put("cks.leader-election.identity", tag + "-b");
                try (OperatorProcess standby = OperatorProcess.start(bed, bed.operatorKubeconfig(properties, "fence-b"), tag + "-b", properties);
                        Watch watch = client.resources(ScaleDown.class).withName(name).watch(recording(history))) {
                    ScaleDown scaleDown = new ScaleDown();
                    scaleDown.getMetadata().setName(name);
                    ScaleDownSpec spec = new ScaleDownSpec();
                    spec.setNodeNames(List.of(leaving));
                    scaleDown.setSpec(spec);
                    client.resource(scaleDown).create();

                    Awaitility.await("the leader stops itself at the intent").atMost(Duration.ofSeconds(90)).until(leader::isStopped);
                    assertThat(leader.output()).contains("PAUSE POINT " + KillPoint.SCALEDOWN_SCALE_INTENT.pointName());
                    Instant frozen = Instant.now();
                    Awaitility.await("the standby finishes").atMost(Duration.ofSeconds(180))
                            .until(() -> LeaderElectionIT.phase(client, name) == ScaleDownStatus.Phase.Succeeded);
                    assertThat(LeaderElectionIT.holder(client)).isEqualTo(tag + "-b");
                    // The standby may finish sooner than the Lease after the freeze (it waits out the Lease, then only the
                    // 20 s request window since the intent): the leader stays frozen at least a Lease and 5 s in any case.
                    Duration hold = Duration.ofSeconds(Math.max(0, Duration.between(Instant.now(), frozen.plusSeconds(OperatorProcess.TEST_LEASE_SECONDS + 5L)).toSeconds()));
                    Awaitility.await().pollDelay(hold).atMost(hold.plusSeconds(5)).until(() -> true);
                    int scalesBefore = cloudStack.simulator().calls("scaleKubernetesCluster").size();
                    assertThat(scalesBefore).as("the standby sent the scale the frozen leader had only recorded").isEqualTo(1);

                    Instant resumed = Instant.now();
                    leader.signal("CONT");
                    assertThat(leader.awaitExit(Duration.ofSeconds(30))).as("the resumed leader halts").isEqualTo(LeaderElection.LOST_LEASE_EXIT_STATUS);
                    assertThat(leader.output()).contains("Lost the leader Lease");
                    Awaitility.await().during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
                            .until(() -> LeaderElectionIT.phase(client, name) == ScaleDownStatus.Phase.Succeeded);

                    assertThat(cloudStack.simulator().calls("scaleKubernetesCluster")).as("no CloudStack write from the resumed leader").hasSize(scalesBefore);
                    assertThat(writesSince(bed.auditLog(), leaderAccount + "-" + TestBed.OPERATOR_SERVICE_ACCOUNT, resumed))
                            .as("no API write from the resumed leader").isEmpty();
                    assertNeverRegressed(history);
                } finally {
                    client.resources(ScaleDown.class).withName(name).delete();
                }
            } finally {
                if (leader.isAlive()) {
                    leader.signal("CONT");
                    leader.kill();
                }
            }
        }
    }

    /**
     * One control plane; the other actor is a second operator process whose wall clock is 45 s ahead (libfaketime),
     * more than the Lease: by Fabric8's rule (its own clock against the holder's renewTime) every Lease looks expired
     * to it. It must refuse to start, naming the skew — or, if it starts, leave the Lease to the running leader.
     */
    @Test
    void aStandbyWhoseClockIs45SecondsAheadDoesNotTakeTheLeaseFromARunningLeader(TestBed bed) throws IOException {
        KubernetesClient client = bed.client();
        try (CloudStackFixture cloudStack = CloudStackFixture.forNodes(bed, "skew", "CloudManaged", List.of(bed.addControlPlane("skew")))) {
            Map<String, String> properties = new HashMap<>(cloudStack.operatorProperties());
            properties.put("cks.leader-election.identity", "skew-a");
            try (OperatorProcess leader = OperatorProcess.start(bed, "skew-a", properties)) {
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "skew-a".equals(LeaderElectionIT.holder(client)));
                properties.put("cks.leader-election.identity", "skew-b");
                OperatorProcess standby;
                try {
                    standby = OperatorProcess.start(bed, bed.operatorKubeconfig(properties), "skew-b", properties, List.of(),
                            SkewedClock.environment(Duration.ofSeconds(45)));
                } catch (IllegalStateException refused) {
                    assertThat(refused.getMessage()).as("the refusal names the skew").contains("clock is 4").contains("ahead of the API server");
                    assertThat(LeaderElectionIT.holder(client)).isEqualTo("skew-a");
                    return;
                }
                try (standby) {
                    Awaitility.await().during(Duration.ofSeconds(2L * OperatorProcess.TEST_LEASE_SECONDS)).atMost(Duration.ofSeconds(3L * OperatorProcess.TEST_LEASE_SECONDS))
                            .pollInterval(Duration.ofMillis(500))
                            .failFast("the skewed standby took the Lease while the leader ran", () -> "skew-b".equals(LeaderElectionIT.holder(client)))
                            .until(() -> true);
                    assertThat(leader.isAlive()).as("the leader still runs").isTrue();
                    leader.kill();
                    Awaitility.await("the standby leads once the leader stopped").atMost(Duration.ofSeconds(90))
                            .until(() -> "skew-b".equals(LeaderElectionIT.holder(client)));
                }
            }
        }
    }

    /** Each status the watch saw: phase and scale job id. */
    private static Watcher<ScaleDown> recording(List<String> history) {
        return new Watcher<>() {
            @Override
            public void eventReceived(Action action, ScaleDown resource) {
                ScaleDownStatus status = resource.getStatus();
                if (status != null && status.getPhase() != null) {
                    history.add(status.getPhase() + " " + (status.getRemoval() == null ? null : status.getRemoval().getJobId()));
                }
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        };
    }

    /** The phase never goes back, and the scale job, once recorded, is never replaced or erased. */
    private static void assertNeverRegressed(List<String> history) {
        assertThat(history).as("the watch saw the ScaleDown's status").isNotEmpty();
        int phase = -1;
        String job = "null";
        for (String seen : history) {
            String[] parts = seen.split(" ");
            int now = ScaleDownStatus.Phase.valueOf(parts[0]).ordinal();
            assertThat(now).as("the phase never goes back: %s", history).isGreaterThanOrEqualTo(phase);
            if (!job.equals("null")) {
                assertThat(parts[1]).as("the recorded scale job stays: %s", history).isEqualTo(job);
            }
            phase = now;
            job = parts[1];
        }
    }

    /** The writes the API server's audit log attributes to the ServiceAccount, received at or after {@code since}. */
    private static List<String> writesSince(Path auditLog, String serviceAccount, Instant since) throws IOException {
        // The log backend writes each event as the request completes; give the last ones a moment to land.
        Awaitility.await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
        ObjectMapper json = new ObjectMapper();
        String user = "system:serviceaccount:" + TestBed.OPERATOR_NAMESPACE + ":" + serviceAccount;
        List<String> writes = new ArrayList<>();
        for (String line : Files.readAllLines(auditLog)) {
            JsonNode event = json.readTree(line);
            String verb = event.path("verb").asText();
            if (user.equals(event.path("user").path("username").asText()) && WRITE_VERBS.contains(verb)
                    && !Instant.parse(event.path("requestReceivedTimestamp").asText()).isBefore(since)) {
                JsonNode ref = event.path("objectRef");
                writes.add(verb + " " + ref.path("resource").asText() + "/" + ref.path("name").asText() + " at " + event.path("requestReceivedTimestamp").asText()
                        + " -> " + event.path("responseStatus").path("code").asInt());
            }
        }
        return writes;
    }
}
