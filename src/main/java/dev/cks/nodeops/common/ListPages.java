package dev.cks.nodeops.common;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.dsl.Listable;

/**
 * Cluster-wide lists in pages: an unpaginated list of every pod of a large cluster is one response of
 * tens of megabytes that the API server assembles at once and the operator holds as text and objects
 * at the same time; pages of {@value #PAGE} keep both bounded (what client-go's pager does).
 */
public final class ListPages {
    public static final long PAGE = 500;

    private ListPages() {
    }

    /** Every item, page by page; an expired continue token (410) surfaces as the client's exception. */
    public static <T extends HasMetadata> List<T> all(Listable<? extends KubernetesResourceList<T>> listable) {
        return all(listable, () -> { });
    }

    /** As {@link #all(Listable)}; {@code eachRequest} runs before each page is asked for, to count what a caller costs the API server. */
    public static <T extends HasMetadata> List<T> all(Listable<? extends KubernetesResourceList<T>> listable, Runnable eachRequest) {
        return all(listable, eachRequest, item -> item);
    }

    /** As {@link #all(Listable, Runnable)}, keeping of each item only what {@code keep} returns, page by page, so the rest never piles up. */
    public static <T extends HasMetadata> List<T> all(Listable<? extends KubernetesResourceList<T>> listable, Runnable eachRequest,
            java.util.function.UnaryOperator<T> keep) {
        List<T> items = new ArrayList<>();
        String token = null;
        do {
            eachRequest.run();
            KubernetesResourceList<T> page = listable.list(new ListOptionsBuilder().withLimit(PAGE).withContinue(token).build());
            page.getItems().forEach(item -> items.add(keep.apply(item)));
            token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
        } while (token != null && !token.isEmpty());
        return items;
    }
}
