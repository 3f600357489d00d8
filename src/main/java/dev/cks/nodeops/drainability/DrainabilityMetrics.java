package dev.cks.nodeops.drainability;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;

/**
 * {@code cks_node_drainable{report,node}}: 1 while the node could be drained now, 0 while it is blocked, as the
 * last pass of each DrainReport found. Exported by the leader, which runs the passes: a replica that loses the
 * Lease halts, so no stale copy outlives it. Each pass replaces its report's series, so a node that is gone or
 * no longer selected loses its series, and a suspended or deleted report loses all of them.
 */
@ApplicationScoped
public class DrainabilityMetrics {
    static final String DRAINABLE = "cks.node.drainable";

    private final MultiGauge drainable;
    private final Map<String, List<MultiGauge.Row<?>>> rowsByReport = new TreeMap<>();

    public DrainabilityMetrics(MeterRegistry registry) {
        this.drainable = MultiGauge.builder(DRAINABLE)
                .description("1 while the node could be drained now, 0 while its drain would be blocked (DrainReport)").register(registry);
    }

    public synchronized void publish(String report, List<Drainability.Verdict> verdicts) {
        rowsByReport.put(report, verdicts.stream()
                .<MultiGauge.Row<?>>map(v -> MultiGauge.Row.of(Tags.of("report", report, "node", v.node()), v.drainable() ? 1 : 0)).toList());
        register();
    }

    public synchronized void forget(String report) {
        if (rowsByReport.remove(report) != null) {
            register();
        }
    }

    private void register() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        rowsByReport.values().forEach(rows::addAll);
        drainable.register(rows, true);
    }
}
