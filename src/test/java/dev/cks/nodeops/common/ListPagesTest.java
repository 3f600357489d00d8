package dev.cks.nodeops.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.PodListBuilder;
import io.fabric8.kubernetes.client.dsl.Listable;

class ListPagesTest {
    /** Serves 1,201 pods in pages of the requested limit, continue tokens being the next offset, as the API server does. */
    private static final class PagedPods implements Listable<PodList> {
        final List<ListOptions> asked = new ArrayList<>();

        @Override
        public PodList list() {
            throw new AssertionError("an unpaginated list was sent");
        }

        @Override
        public PodList list(ListOptions options) {
            asked.add(options);
            int from = options.getContinue() == null ? 0 : Integer.parseInt(options.getContinue());
            int to = (int) Math.min(1201, from + options.getLimit());
            List<Pod> pods = new ArrayList<>();
            for (int i = from; i < to; i++) {
                pods.add(new PodBuilder().withNewMetadata().withName("pod-" + i).endMetadata().build());
            }
            return new PodListBuilder().withItems(pods).withNewMetadata().withContinue(to < 1201 ? Integer.toString(to) : null).endMetadata().build();
        }

        @Override
        public PodList list(Integer limitVal, String continueVal) {
            throw new AssertionError("not used");
        }
    }

    @Test
    void everyItemComesPageByPageFollowingTheContinueTokens() {
        PagedPods pods = new PagedPods();

        List<Pod> all = ListPages.all(pods);

        assertThat(all).hasSize(1201).extracting(p -> p.getMetadata().getName()).doesNotHaveDuplicates().startsWith("pod-0").endsWith("pod-1200");
        assertThat(pods.asked).extracting(ListOptions::getLimit).containsOnly(ListPages.PAGE);
        assertThat(pods.asked).extracting(ListOptions::getContinue).containsExactly(null, "500", "1000");
    }
}
