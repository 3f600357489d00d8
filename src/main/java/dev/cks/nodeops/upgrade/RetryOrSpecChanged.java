package dev.cks.nodeops.upgrade;

import java.util.Map;
import java.util.Objects;

import dev.cks.nodeops.common.NodeAnnotations;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;

/**
 * Which changes of a NodeUpgrade wake its reconciler: a new generation (spec), the retry annotation
 * (which does not bump the generation), deletion, or finalizers. Not our own status patches: the state
 * machine reschedules itself and is woken by Node and Job events. JOSDK's generation-aware filtering
 * alone would drop the retry annotation, so it is switched off and this filter takes its place.
 */
public class RetryOrSpecChanged implements OnUpdateFilter<NodeUpgrade> {
    @Override
    public boolean accept(NodeUpgrade newer, NodeUpgrade older) {
        return !Objects.equals(newer.getMetadata().getGeneration(), older.getMetadata().getGeneration())
                || !Objects.equals(retry(newer), retry(older))
                || newer.getMetadata().getDeletionTimestamp() != null
                || !Objects.equals(newer.getMetadata().getFinalizers(), older.getMetadata().getFinalizers());
    }

    private static String retry(NodeUpgrade upgrade) {
        Map<String, String> annotations = upgrade.getMetadata().getAnnotations();
        return annotations == null ? null : annotations.get(NodeAnnotations.RETRY);
    }
}
