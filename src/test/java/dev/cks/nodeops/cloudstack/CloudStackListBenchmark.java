package dev.cks.nodeops.cloudstack;

import dev.cks.nodeops.cloudstack.simulator.CloudStackSimulator;
import dev.cks.nodeops.cloudstack.simulator.Owner;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Lists 5,000 VMs from the simulator with the real client (signatureVersion 3, default page size)
 * and reports calls, wall time and bytes allocated by the calling thread. A main, not a test, so
 * normal builds neither run nor silently skip it; see docs/benchmarks.md for the command.
 * Arguments: [vmCount=5000] [measuredRuns=7] [warmupRuns=3].
 */
public final class CloudStackListBenchmark {

    private CloudStackListBenchmark() {
    }

    public static void main(String[] args) {
        int vmCount = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        int warmups = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

        try (CloudStackSimulator simulator = CloudStackSimulator.start()) {
            for (int i = 0; i < vmCount; i++) {
                simulator.addVm("bench-vm-" + i, Owner.of(simulator.defaultAccount()));
            }
            CloudStackClient client = new CloudStackClient(simulator.credentials(), CloudStackClientSettings.DEFAULTS,
                    new SimpleMeterRegistry(), Clock.systemUTC(), Sleeper.REAL);
            for (int i = 0; i < warmups; i++) {
                client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER));
            }

            List<Double> millis = new ArrayList<>();
            List<Long> allocated = new ArrayList<>();
            int callsPerRun = -1;
            for (int i = 0; i < runs; i++) {
                simulator.clearCalls();
                long bytesBefore = threads.getCurrentThreadAllocatedBytes();
                long start = System.nanoTime();
                int listed = client.listVirtualMachines(VmQuery.allOf(OwnerScope.CALLER)).size();
                long elapsed = System.nanoTime() - start;
                allocated.add(threads.getCurrentThreadAllocatedBytes() - bytesBefore);
                millis.add(elapsed / 1e6);
                callsPerRun = simulator.calls("listVirtualMachines").size();
                if (listed != vmCount) {
                    throw new IllegalStateException("listed " + listed + " VMs, expected " + vmCount);
                }
            }
            System.out.printf("VMs listed:            %d%n", vmCount);
            System.out.printf("calls per listing:     %d (pagesize %d)%n", callsPerRun, CloudStackClientSettings.DEFAULTS.pageSize());
            System.out.printf("wall time, median:     %.1f ms (min %.1f, max %.1f, %d runs after %d warm-up)%n",
                    median(millis), Collections.min(millis), Collections.max(millis), runs, warmups);
            System.out.printf("allocated, median:     %.1f MB by the calling thread (min %.1f, max %.1f)%n",
                    median(allocated.stream().map(b -> b / 1e6).toList()),
                    Collections.min(allocated) / 1e6, Collections.max(allocated) / 1e6);
            System.out.printf("java:                  %s, %d CPUs%n", System.getProperty("java.version"),
                    Runtime.getRuntime().availableProcessors());
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}
