package dev.cks.nodeops.monitoring;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

import org.jboss.logging.Logger;

import dev.cks.nodeops.audit.AuditSettings;
import dev.cks.nodeops.audit.VMMapAudit;
import dev.cks.nodeops.common.OperatorSettings;
import dev.cks.nodeops.scaledown.ScaleDown;
import dev.cks.nodeops.upgrade.NodeUpgrade;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;

/**
 * Exports {@link StatusSeries} from watches on the three kinds. Every replica watches and exports, not
 * only the leader, so the series neither vanish nor restart when leadership moves (an alert's `for`
 * keeps counting), and alerts take `max by` over the replicas.
 */
@ApplicationScoped
public class StatusMetrics {
    private static final Logger LOG = Logger.getLogger(StatusMetrics.class);

    private final KubernetesClient client;
    private final java.time.Clock clock;
    private final AuditSettings auditSettings;
    private final MultiGauge phases;
    private final MultiGauge drainsBlocked;
    private final MultiGauge findings;
    private final MultiGauge lastCompleteRuns;
    private final MultiGauge auditIntervals;
    private final MultiGauge nodesBelowTarget;
    private final MultiGauge estimatedFinishes;
    private SharedIndexInformer<NodeUpgrade> upgrades;
    private SharedIndexInformer<ScaleDown> scaleDowns;
    private SharedIndexInformer<VMMapAudit> audits;

    public StatusMetrics(KubernetesClient client, OperatorSettings settings, MeterRegistry registry, java.time.Clock clock) {
        this.client = client;
        this.clock = clock;
        this.auditSettings = AuditSettings.of(settings);
        this.phases = MultiGauge.builder(StatusSeries.OPERATION_PHASE).description("1 for the phase each operation is in").register(registry);
        this.drainsBlocked = MultiGauge.builder(StatusSeries.DRAIN_BLOCKED)
                .description("1 while a node's drain is blocked, 0 while it drains unhindered").register(registry);
        this.findings = MultiGauge.builder(StatusSeries.FINDINGS).description("Current VM-map audit findings by type").register(registry);
        this.lastCompleteRuns = MultiGauge.builder(StatusSeries.LAST_COMPLETE_RUN).baseUnit("seconds")
                .description("When the last VM-map audit run that compared all views started (epoch seconds)").register(registry);
        this.auditIntervals = MultiGauge.builder(StatusSeries.AUDIT_INTERVAL).baseUnit("seconds")
                .description("The interval an audit that is not suspended runs at").register(registry);
        this.nodesBelowTarget = MultiGauge.builder(StatusSeries.NODES_BELOW_TARGET)
                .description("Selected nodes older than a Continuous NodeUpgrade's target at its last look").register(registry);
        this.estimatedFinishes = MultiGauge.builder(StatusSeries.ESTIMATED_FINISH).baseUnit("seconds")
                .description("When each running NodeUpgrade and ScaleDown is estimated to be done (epoch seconds)").register(registry);
    }

    void start(@Observes StartupEvent event) {
        upgrades = watch(NodeUpgrade.class);
        scaleDowns = watch(ScaleDown.class);
        audits = watch(VMMapAudit.class);
    }

    void stop(@Observes ShutdownEvent event) {
        for (SharedIndexInformer<?> informer : new SharedIndexInformer<?>[] { upgrades, scaleDowns, audits }) {
            if (informer != null) {
                informer.stop();
            }
        }
    }

    private <T extends HasMetadata> SharedIndexInformer<T> watch(Class<T> type) {
        SharedIndexInformer<T> informer = client.resources(type).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<T>() {
            @Override
            public void onAdd(T resource) {
                refresh();
            }

            @Override
            public void onUpdate(T before, T after) {
                refresh();
            }

            @Override
            public void onDelete(T resource, boolean finalStateUnknown) {
                refresh();
            }
        });
        // The API server may be away (a control-plane node being upgraded): keep trying, as the controllers do.
        informer.exceptionHandler((started, error) -> {
            LOG.debugf("watch of %s for metrics: %s; retrying", type.getSimpleName(), error.getMessage());
            return true;
        });
        informer.start();
        return informer;
    }

    void refresh() {
        export(list(upgrades), list(scaleDowns), list(audits));
    }

    /** Replaces every series with those of these CRs. */
    synchronized void export(List<NodeUpgrade> nu, List<ScaleDown> sd, List<VMMapAudit> vma) {
        register(phases, StatusSeries.operationPhases(nu, sd));
        // A drain tick patches the status (its progress line counts the seconds blocked), so this runs on every tick.
        register(drainsBlocked, StatusSeries.drainsBlocked(nu, sd, clock.instant()));
        register(findings, StatusSeries.findings(vma));
        register(lastCompleteRuns, StatusSeries.lastCompleteRuns(vma));
        register(auditIntervals, StatusSeries.auditIntervals(vma, auditSettings));
        register(nodesBelowTarget, StatusSeries.nodesBelowTarget(nu));
        register(estimatedFinishes, StatusSeries.estimatedFinishes(nu, sd));
    }

    private static <T> List<T> list(SharedIndexInformer<T> informer) {
        return informer == null ? List.of() : informer.getStore().list();
    }

    /** Replaces the gauge's rows; series of CRs that are gone are removed. */
    private static void register(MultiGauge gauge, List<StatusSeries.Sample> samples) {
        Function<Map<String, String>, Tags> tags = labels -> Tags.of(labels.entrySet().stream()
                .map(e -> io.micrometer.core.instrument.Tag.of(e.getKey(), e.getValue())).toList());
        gauge.register(samples.stream().map(s -> MultiGauge.Row.of(tags.apply(s.labels()), s.value())).toList(), true);
    }
}
