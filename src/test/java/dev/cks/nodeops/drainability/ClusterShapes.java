package dev.cks.nodeops.drainability;

import java.util.ArrayList;
import java.util.List;

import dev.cks.nodeops.common.NodeAnnotations;
import dev.cks.nodeops.testing.TestNodes;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;

/** Readings of a cluster for the report's tests without a cluster: nodes, pods of workloads and bare pods, and budgets. */
final class ClusterShapes {
    static final String NAMESPACE = "shop";

    final List<Node> nodes = new ArrayList<>();
    final List<Pod> pods = new ArrayList<>();
    final List<PodDisruptionBudget> budgets = new ArrayList<>();

    ClusterShapes workers(String... names) {
        for (String name : names) {
            nodes.add(TestNodes.node(name).label("pool", "a").build());
        }
        return this;
    }

    ClusterShapes optedOut(String name, String why) {
        nodes.add(TestNodes.node(name).label("pool", "a").annotation(NodeAnnotations.EXCLUDE, why).build());
        return this;
    }

    /** A pod of Deployment {@code app} (ReplicaSet app-7f9c, as the Deployment controller names it) on the node. */
    ClusterShapes deploymentPod(String app, String pod, String node) {
        pods.add(base(pod, node).editMetadata().addToLabels("app", app).addToLabels("pod-template-hash", "7f9c")
                .addNewOwnerReference().withKind("ReplicaSet").withName(app + "-7f9c").withController(true).withApiVersion("apps/v1").withUid(app)
                .endOwnerReference().endMetadata().build());
        return this;
    }

    /** As {@link #deploymentPod}, and only that node's hostname label fits it: its replacement can go nowhere else. */
    ClusterShapes pinnedPod(String app, String pod, String node) {
        deploymentPod(app, pod, node);
        Pod last = pods.remove(pods.size() - 1);
        pods.add(new PodBuilder(last).editSpec().addToNodeSelector("kubernetes.io/hostname", node).endSpec().build());
        return this;
    }

    ClusterShapes barePod(String pod, String node) {
        pods.add(base(pod, node).build());
        return this;
    }

    ClusterShapes emptyDirPod(String app, String pod, String node) {
        deploymentPod(app, pod, node);
        Pod last = pods.remove(pods.size() - 1);
        pods.add(new PodBuilder(last).editSpec().addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume().endSpec().build());
        return this;
    }

    ClusterShapes daemonSetPod(String pod, String node) {
        pods.add(base(pod, node).editMetadata().addNewOwnerReference().withKind("DaemonSet").withName("agent").withController(true)
                .withApiVersion("apps/v1").withUid("agent").endOwnerReference().endMetadata().build());
        return this;
    }

    ClusterShapes budget(String name, String app, int healthy, int allowed) {
        budgets.add(new PodDisruptionBudgetBuilder().withNewMetadata().withNamespace(NAMESPACE).withName(name).endMetadata()
                .withNewSpec().withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
                .withNewStatus().withDesiredHealthy(healthy - allowed).withCurrentHealthy(healthy).withDisruptionsAllowed(allowed)
                .withExpectedPods(healthy).endStatus().build());
        return this;
    }

    Drainability.Reading reading() {
        return new Drainability.Reading(List.copyOf(nodes), List.copyOf(pods), List.copyOf(budgets));
    }

    private static PodBuilder base(String pod, String node) {
        return new PodBuilder().withNewMetadata().withNamespace(NAMESPACE).withName(pod).endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec()
                .withNewStatus().withPhase("Running").endStatus();
    }
}
