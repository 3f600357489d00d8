package dev.cks.nodeops.audit;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cks.nodeops.audit.ClusterView.MappedVm;
import dev.cks.nodeops.common.EventRecorder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * Measures the audit without a cluster: the pure checker on a 50,000-VM snapshot, and complete
 * passes on 5,000 VMs and 5,000 Nodes (CloudStack answers from memory, so its latency is excluded;
 * Nodes are read through the informer-cache reader from pruned Node objects; status, dedupe and
 * metrics are real, events go nowhere). Run from the project root:
 *
 * <pre>
 * ./mvnw -B -q test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -Xmx512m -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) dev.cks.nodeops.audit.VmMapAuditBenchmark
 * </pre>
 *
 * Figures are per operation, median of the measured rounds after warm-up; CPU time and allocation are
 * of the measuring thread (the audit is single-threaded).
 */
public final class VmMapAuditBenchmark {
    private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
    private static final Instant LONG_AGO = NOW.minus(Duration.ofDays(30));
    private static final int WARMUP_ROUNDS = 20;
    private static final int MEASURED_ROUNDS = 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Holds the measured object so the collector cannot free it before the heap is read. */
    private static volatile Object keptAlive;

    private VmMapAuditBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        System.out.printf(Locale.ROOT, "Java %s, %d CPUs available, max heap %d MiB, load average %.1f at start%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                Runtime.getRuntime().maxMemory() >> 20, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.println("| scenario | wall ms | CPU ms | allocated MiB | findings |");
        System.out.println("|---|---:|---:|---:|---:|");

        AuditSnapshot clean50k = snapshot(50_000, 0);
        measure("checker, 50,000 VMs + 50,000 Nodes, in sync", () -> VmMapChecker.check(clean50k).size());
        AuditSnapshot drift50k = snapshot(50_000, 10);
        measure("checker, 50,000 VMs + 50,000 Nodes, 10% drift", () -> VmMapChecker.check(drift50k).size());
        long retained = retainedBytes(() -> snapshot(50_000, 0));
        System.out.printf(Locale.ROOT, "%nSnapshot of 50,000 VMs + 50,000 Nodes retains about %.1f MiB of heap.%n%n",
                retained / 1048576.0);

        System.out.println("| scenario | wall ms | CPU ms | allocated MiB | findings |");
        System.out.println("|---|---:|---:|---:|---:|");
        warmUpPasses();
        for (int driftPercent : new int[] { 0, 1, 100 }) {
            AuditSnapshot snapshot = snapshot(5_000, driftPercent);
            InMemoryCloud cloud = new InMemoryCloud(snapshot);
            VMMapAudit audit = audit();
            AuditPass pass = new AuditPass(Clock.fixed(NOW, ZoneOffset.UTC), cloud, informerCache(snapshot), AuditSettings.DEFAULTS,
                    new NoEvents(), new AuditMetrics(new SimpleMeterRegistry()));
            if (driftPercent == 100) {
                measure("full pass, 5,000 VMs + 5,000 Nodes, 100% drift, first run (all new)", () -> {
                    audit.setStatus(null);
                    return pass.run(audit).status().getFindingCount();
                });
            }
            measure("full pass, 5,000 VMs + 5,000 Nodes, " + driftPercent + "% drift, steady state", () -> {
                audit.setStatus(pass.run(audit).status());
                return audit.getStatus().getFindingCount();
            });
            int statusBytes = new ObjectMapper().writeValueAsBytes(audit.getStatus()).length;
            System.out.printf(Locale.ROOT, "| ↳ status: %,d bytes of JSON, %d findings listed, %d reported keys | | | | |%n",
                    statusBytes, audit.getStatus().getFindings().size(), audit.getStatus().getReportedKeys().size());
        }
    }

    /** The JIT compiles the pass's code paths before any of them is measured, so the first scenario is not penalised. */
    private static void warmUpPasses() {
        AuditSnapshot snapshot = snapshot(5_000, 10);
        VMMapAudit audit = audit();
        AuditPass pass = new AuditPass(Clock.fixed(NOW, ZoneOffset.UTC), new InMemoryCloud(snapshot), informerCache(snapshot),
                AuditSettings.DEFAULTS, new NoEvents(), new AuditMetrics(new SimpleMeterRegistry()));
        for (int i = 0; i < 200; i++) {
            audit.setStatus(i % 2 == 0 ? null : pass.run(audit).status());
        }
    }

    /**
     * A cluster named "prod" whose every VM is mapped and a Node; with drift, every tenth of the given
     * share is destroyed, unmapped, a VM without Node or a Node without VM, in turn.
     */
    static AuditSnapshot snapshot(int size, int driftPercent) {
        List<MappedVm> map = new ArrayList<>(size);
        List<OwnedVm> vms = new ArrayList<>(size + size / 10);
        List<NodeView> nodes = new ArrayList<>(size);
        int driftEvery = driftPercent == 0 ? Integer.MAX_VALUE : Math.max(1, 100 / driftPercent);
        for (int i = 0; i < size; i++) {
            String id = String.format(Locale.ROOT, "0c3f%04x-0000-4000-8000-%012x", i & 0xffff, i);
            String name = String.format(Locale.ROOT, "prod-node-%011x", 0x18c2f3a9b10L + i);
            boolean drifts = driftPercent > 0 && i % driftEvery == 0;
            int kind = (i / driftEvery) % 4;
            String state = drifts && kind == 0 ? "Destroyed" : "Running";
            if (!(drifts && kind == 1)) {
                map.add(new MappedVm(id, name, state));
            }
            vms.add(new OwnedVm(id, name, state, LONG_AGO, LONG_AGO));
            if (!(drifts && kind == 2)) {
                nodes.add(new NodeView(i % 2 == 0 ? name : name + ".cluster.local", LONG_AGO));
            }
            if (drifts && kind == 3) {
                nodes.add(new NodeView("stray-" + i, LONG_AGO));
            }
            if (i % 10 == 0) {
                vms.add(new OwnedVm("other-" + i, "staging-node-" + Integer.toHexString(0x10000000 + i), "Running", LONG_AGO, null));
            }
        }
        return new AuditSnapshot(new ClusterView("c-1", "prod", "Running", "CloudManaged", map), vms, Set.of(),
                ClusterNodes.of(nodes), NOW, Duration.ofMinutes(15));
    }

    private static void measure(String scenario, Supplier<Integer> operation) {
        for (int i = 0; i < WARMUP_ROUNDS; i++) {
            operation.get();
        }
        long[] wall = new long[MEASURED_ROUNDS];
        long[] cpu = new long[MEASURED_ROUNDS];
        long[] allocated = new long[MEASURED_ROUNDS];
        int findings = 0;
        long thread = Thread.currentThread().getId();
        for (int i = 0; i < MEASURED_ROUNDS; i++) {
            long allocatedBefore = THREADS.getThreadAllocatedBytes(thread);
            long cpuBefore = THREADS.getCurrentThreadCpuTime();
            long wallBefore = System.nanoTime();
            findings = operation.get();
            wall[i] = System.nanoTime() - wallBefore;
            cpu[i] = THREADS.getCurrentThreadCpuTime() - cpuBefore;
            allocated[i] = THREADS.getThreadAllocatedBytes(thread) - allocatedBefore;
        }
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %,d |%n", scenario, median(wall) / 1e6, median(cpu) / 1e6,
                median(allocated) / 1048576.0, findings);
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static long retainedBytes(Supplier<Object> build) {
        long before = usedAfterGc();
        keptAlive = build.get();
        long after = usedAfterGc();
        keptAlive = null;
        return after - before;
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime runtime = Runtime.getRuntime();
        return runtime.totalMemory() - runtime.freeMemory();
    }

    private static VMMapAudit audit() {
        VMMapAudit audit = new VMMapAudit();
        audit.setMetadata(new ObjectMetaBuilder().withName("bench").withGeneration(1L).build());
        VMMapAuditSpec spec = new VMMapAuditSpec();
        spec.setClusterId("c-1");
        audit.setSpec(spec);
        return audit;
    }

    /** Nodes as the informer's pruned cache holds them, so the pass includes reading them. */
    private static NodeSource informerCache(AuditSnapshot snapshot) {
        List<Node> cached = snapshot.nodes().nodes().stream().map(node -> new NodeBuilder().withNewMetadata()
                .withName(node.name()).withCreationTimestamp(node.created().toString()).withResourceVersion("1")
                .endMetadata().build()).toList();
        return new InformerNodeSource(() -> true, java.util.Optional::empty, cached::stream);
    }

    private static final class InMemoryCloud implements AuditSource {
        private final AuditSnapshot snapshot;

        InMemoryCloud(AuditSnapshot snapshot) {
            this.snapshot = snapshot;
        }

        @Override
        public ClusterLookup cluster(String clusterId, java.util.Collection<String> nodeNames) {
            return ClusterLookup.found(snapshot.cluster());
        }

        @Override
        public List<OwnedVm> ownerVms(ClusterView cluster) {
            return snapshot.ownerVms();
        }

        @Override
        public Set<String> otherClustersMappedIds(ClusterView cluster) {
            return new HashSet<>();
        }
    }

    private static final class NoEvents extends EventRecorder {
        NoEvents() {
            super(null, Clock.systemUTC());
        }

        @Override
        public void warning(HasMetadata subject, String reason, String message) {
        }

        @Override
        public void normal(HasMetadata subject, String reason, String message) {
        }
    }
}
