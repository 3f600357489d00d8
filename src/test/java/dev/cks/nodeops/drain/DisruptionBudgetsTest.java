package dev.cks.nodeops.drain;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cks.nodeops.drain.BlockedByReport.BudgetNumbers;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

class DisruptionBudgetsTest {
    @Test
    void findsTheBudgetNamedInA429sCauses() {
        assertThat(DisruptionBudgets.namedIn(List.of("The disruption budget web-pdb needs 3 healthy pods and has 3 currently"))).hasValue("web-pdb");
        assertThat(DisruptionBudgets.namedIn(List.of("The disruption budget web-pdb is still being processed by the server."))).hasValue("web-pdb");
        assertThat(DisruptionBudgets.namedIn(List.of("The disruption budget db.v2 needs 1 healthy pods"))).hasValue("db.v2");
        assertThat(DisruptionBudgets.namedIn(List.of("something else"))).isEmpty();
    }

    @Test
    void coversPodsOfItsNamespaceMatchingItsSelector() {
        PodDisruptionBudget web = new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace("shop").withName("web-pdb").endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec().build();
        var shopWeb = new PodBuilder().withNewMetadata().withNamespace("shop").withName("w").addToLabels("app", "web").endMetadata().build();
        var otherWeb = new PodBuilder().withNewMetadata().withNamespace("other").withName("w").addToLabels("app", "web").endMetadata().build();
        assertThat(DisruptionBudgets.covering(shopWeb, List.of(web))).containsExactly(web);
        assertThat(DisruptionBudgets.covering(otherWeb, List.of(web))).isEmpty();
        assertThat(DisruptionBudgets.numbers(web).describe()).as("no status yet reads as zeros").isEqualTo("pdb shop/web-pdb: needs 0 healthy, has 0, 0 disruptions allowed");
    }

    @Test
    void numbersAfterEvictionsAllowAsManyFewerDisruptionsAsTheBudgetsReadyPodsEvicted() {
        PodDisruptionBudget web = new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace("shop").withName("web-pdb").endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
                .withNewStatus().withDisruptionsAllowed(2).withCurrentHealthy(6).withDesiredHealthy(4).withExpectedPods(6).endStatus().build();
        Pod web0 = pod("web", "web-0", true);
        Pod web1 = pod("web", "web-1", true);
        Pod web2 = pod("web", "web-2", true);

        assertThat(DisruptionBudgets.numbersAfter(web, List.of()).disruptionsAllowed()).isEqualTo(2);
        assertThat(DisruptionBudgets.numbersAfter(web, List.of(web0, pod("web", "web-9", false), pod("db", "db-0", true))).disruptionsAllowed())
                .as("a pod not Ready uses no allowance; a pod of another app is not under the budget").isEqualTo(1);
        assertThat(DisruptionBudgets.numbersAfter(web, List.of(web0, web1, web2))).as("never below zero")
                .isEqualTo(new BudgetNumbers("shop", "web-pdb", 4, 6, 0, 6));
    }

    private static Pod pod(String app, String name, boolean ready) {
        return new PodBuilder().withNewMetadata().withNamespace("shop").withName(name).addToLabels("app", app).endMetadata()
                .withNewStatus().addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus().build();
    }
}
