package dev.cks.nodeops.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CapturedExampleTest {
    private static final String RUN = """
            $ kubectl get sd remove-shop-node-3fa1
            NAME                    NODES                PHASE      PROGRESS   NODE                 NEXT WINDOW   AGE
            remove-shop-node-3fa1   shop-node-3fa1       Draining   0/1        shop-node-3fa1                     41s
            $ kubectl describe sd remove-shop-node-3fa1
            Metadata:
              Creation Timestamp:  2026-12-01T03:10:02Z
              Resource Version:    1234
              UID:                 0f8fad5b-d9cb-469f-a165-70867728950e
            Status:
              Message:  Draining node shop-node-3fa1 (attempt 1/3); blocked for 12s by pdb shop-2-8e3a2/web-pdb (pods shop-2-8e3a2/web-5f7c9d8b4-x2kq9)
            Events:
              Warning  DrainBlocked  30s (x2 over 41s)  cks-node-operator  The drain of node shop-node-3fa1 is blocked
            """;

    private static final String DOC = """
            Some prose.

            <!-- example drain-blocked: a transcript -->
            ```console
            $ kubectl get sd remove-shop-node-1c2
            NAME                  NODES              PHASE      PROGRESS   NODE               NEXT WINDOW   AGE
            remove-shop-node-1c2  shop-node-1c2      Draining   0/1        shop-node-1c2                    6m2s
            $ kubectl describe sd remove-shop-node-1c2
            ...
            Status:
              Message:  Draining node shop-node-1c2 (attempt 1/3); blocked for 2m by pdb shop-7-1f/web-pdb (pods shop-7-1f/web-66b8c9d7f4-qq2mp)
            ...
            ```
            More prose.
            """;

    @Test
    void findsTheFencedBlockAfterItsMarker() {
        String example = CapturedExample.in(DOC, "drain-blocked");
        assertThat(example).startsWith("$ kubectl get sd").endsWith("...\n").doesNotContain("```").doesNotContain("prose");
        assertThatThrownBy(() -> CapturedExample.in(DOC, "other")).hasMessageContaining("no example other");
    }

    @Test
    void aRunOfTheSameSituationMatchesDespiteNamesAgesHashesAndPadding() {
        assertThat(CapturedExample.matches(CapturedExample.in(DOC, "drain-blocked"), RUN)).isTrue();
    }

    @Test
    void aChangedWordOrAMissingLineDoesNotMatch() {
        String example = CapturedExample.in(DOC, "drain-blocked");
        assertThat(CapturedExample.matches(example, RUN.replace("attempt 1/3", "attempt 2/3"))).isFalse();
        assertThat(CapturedExample.matches(example, RUN.replace("Draining   0/1", "Removing   0/1"))).isFalse();
        assertThat(CapturedExample.matches(example, RUN.replace("Status:\n", ""))).isFalse();
        assertThat(CapturedExample.matches(example, RUN.replace("by pdb", "by a pdb"))).isFalse();
    }

    @Test
    void withoutATrailingElisionTheRunMustEndThere() {
        String example = CapturedExample.in(DOC, "drain-blocked").replaceFirst("\\.\\.\\.\n$", "");
        assertThat(CapturedExample.matches(example, RUN)).isFalse();
    }
}
