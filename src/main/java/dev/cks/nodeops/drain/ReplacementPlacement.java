package dev.cks.nodeops.drain;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.cks.nodeops.nodes.NodeReadiness;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;

/**
 * Whether the replacement of each pod a drain evicts could be scheduled on a node that stays: the
 * kube-scheduler's filters, replayed on what was read — unschedulable and drained nodes, taints and
 * tolerations, nodeSelector and required node affinity, requested resources against allocatable,
 * host ports, required pod affinity and anti-affinity (both ways), and topology spread constraints
 * that must not be violated. Pure. Replacements are placed one after the other, each taking its room,
 * as they would arrive.
 *
 * <p>A replacement is taken to look like the pod it replaces (its controller's template made both).
 * What is not modelled (volume node affinity, scheduler extenders, a namespaceSelector that names labels,
 * dynamic resources) counts as fitting: the prediction never refuses an operation on a guess.
 */
public final class ReplacementPlacement {
    /** Where a replacement could run, or why it could run nowhere. */
    public sealed interface Verdict {
    }

    public record Placed(String node) implements Verdict {
    }

    /** @param why as the scheduler says it, e.g. {@code 0/3 nodes are available: 2 node(s) are being drained, ...} */
    public record Nowhere(String why) implements Verdict {
    }

    private static final String DRAINED = "node(s) are being drained";
    private static final Set<String> COUNTED_RESOURCES = Set.of("cpu", "memory", "ephemeral-storage");

    private final Map<String, Node> nodes = new LinkedHashMap<>();
    /** Pods that stay (or have been placed) per node. */
    private final Map<String, List<Pod>> podsByNode = new HashMap<>();
    private final Collection<String> leaving;

    private ReplacementPlacement(List<Node> allNodes, List<Pod> staying, Collection<String> leaving) {
        allNodes.forEach(n -> nodes.put(n.getMetadata().getName(), n));
        this.leaving = leaving;
        for (Pod pod : staying) {
            String node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
            if (node != null && !PodFilters.finished(pod)) {
                podsByNode.computeIfAbsent(node, n -> new ArrayList<>()).add(pod);
            }
        }
    }

    /**
     * @param evicted the pods the drain would evict, in the order they go
     * @param leaving the nodes being drained together (nothing new is scheduled there)
     * @param allNodes every Node of the cluster
     * @param allPods every pod of the cluster, the evicted ones included
     * @return per evicted pod (namespace/name), where its replacement could run
     */
    public static Map<String, Verdict> place(List<Pod> evicted, Collection<String> leaving, List<Node> allNodes, List<Pod> allPods) {
        Set<String> evictedRefs = evicted.stream().map(PodFilters::name).collect(Collectors.toSet());
        List<Pod> staying = allPods.stream().filter(p -> !evictedRefs.contains(PodFilters.name(p))).toList();
        ReplacementPlacement placement = new ReplacementPlacement(allNodes, staying, leaving);
        Map<String, Verdict> verdicts = new LinkedHashMap<>();
        for (Pod pod : evicted) {
            verdicts.put(PodFilters.name(pod), placement.placeOne(pod));
        }
        return verdicts;
    }

    private Verdict placeOne(Pod pod) {
        if (PodFilters.controllerOf(pod) == null) {
            return new Nowhere("no controller makes a replacement of this pod");
        }
        Map<String, Integer> reasons = new TreeMap<>();
        for (Node node : nodes.values()) {
            String why = misfit(pod, node);
            if (why == null) {
                Pod replacement = new io.fabric8.kubernetes.api.model.PodBuilder(pod).editSpec().withNodeName(node.getMetadata().getName()).endSpec().build();
                podsByNode.computeIfAbsent(node.getMetadata().getName(), n -> new ArrayList<>()).add(replacement);
                return new Placed(node.getMetadata().getName());
            }
            reasons.merge(why, 1, Integer::sum);
        }
        // Sorted like the scheduler's FailedScheduling message.
        String listed = reasons.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).sorted().collect(Collectors.joining(", "));
        return new Nowhere("0/" + nodes.size() + " nodes are available" + (listed.isEmpty() ? "" : ": " + listed));
    }

    /** Why the pod cannot go to the node, in the scheduler's words; null when it fits. */
    private String misfit(Pod pod, Node node) {
        String name = node.getMetadata().getName();
        if (leaving.contains(name)) {
            return DRAINED;
        }
        if (NodeReadiness.isUnschedulable(node)) {
            return "node(s) were unschedulable";
        }
        if (!NodeReadiness.isReady(node)) {
            return "node(s) were not ready";
        }
        Taint untolerated = untoleratedTaint(pod, node);
        if (untolerated != null) {
            return "node(s) had untolerated taint {" + untolerated.getKey() + ": " + Objects.toString(untolerated.getValue(), "") + "}";
        }
        if (!matchesNodeSelectorAndAffinity(pod, node)) {
            return "node(s) didn't match Pod's node affinity/selector";
        }
        String insufficient = insufficientResource(pod, node);
        if (insufficient != null) {
            return "Insufficient " + insufficient;
        }
        if (hostPortTaken(pod, name)) {
            return "node(s) didn't have free ports for the requested pod ports";
        }
        if (!podAffinityHolds(pod, node)) {
            return "node(s) didn't match pod affinity rules";
        }
        if (!podAntiAffinityHolds(pod, node)) {
            return "node(s) didn't match pod anti-affinity rules";
        }
        if (!topologySpreadHolds(pod, node)) {
            return "node(s) didn't match pod topology spread constraints";
        }
        return null;
    }

    // --- taints and tolerations ---

    static Taint untoleratedTaint(Pod pod, Node node) {
        List<Taint> taints = node.getSpec() == null || node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
        List<Toleration> tolerations = pod.getSpec().getTolerations() == null ? List.of() : pod.getSpec().getTolerations();
        for (Taint taint : taints) {
            // PreferNoSchedule only scores; cordoning is the unschedulable check above.
            if (!"NoSchedule".equals(taint.getEffect()) && !"NoExecute".equals(taint.getEffect())) {
                continue;
            }
            if (tolerations.stream().noneMatch(t -> tolerates(t, taint))) {
                return taint;
            }
        }
        return null;
    }

    static boolean tolerates(Toleration toleration, Taint taint) {
        if (toleration.getEffect() != null && !toleration.getEffect().isEmpty() && !toleration.getEffect().equals(taint.getEffect())) {
            return false;
        }
        String key = toleration.getKey();
        boolean exists = "Exists".equals(toleration.getOperator());
        if (key == null || key.isEmpty()) {
            // An empty key with Exists tolerates everything.
            return exists;
        }
        if (!key.equals(taint.getKey())) {
            return false;
        }
        return exists || Objects.equals(Objects.toString(toleration.getValue(), ""), Objects.toString(taint.getValue(), ""));
    }

    // --- node selector and required node affinity ---

    static boolean matchesNodeSelectorAndAffinity(Pod pod, Node node) {
        Map<String, String> labels = labels(node);
        Map<String, String> selector = pod.getSpec().getNodeSelector();
        if (selector != null && selector.entrySet().stream().anyMatch(e -> !e.getValue().equals(labels.get(e.getKey())))) {
            return false;
        }
        var affinity = pod.getSpec().getAffinity();
        if (affinity == null || affinity.getNodeAffinity() == null
                || affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
            return true;
        }
        List<NodeSelectorTerm> terms = affinity.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms();
        // The terms are ORed; an empty list matches nothing.
        return terms != null && terms.stream().anyMatch(term -> termMatches(term, node.getMetadata().getName(), labels));
    }

    private static boolean termMatches(NodeSelectorTerm term, String nodeName, Map<String, String> labels) {
        List<NodeSelectorRequirement> expressions = term.getMatchExpressions() == null ? List.of() : term.getMatchExpressions();
        List<NodeSelectorRequirement> fields = term.getMatchFields() == null ? List.of() : term.getMatchFields();
        if (expressions.isEmpty() && fields.isEmpty()) {
            return false;
        }
        return expressions.stream().allMatch(r -> requirementMatches(r, labels.get(r.getKey())))
                && fields.stream().allMatch(r -> "metadata.name".equals(r.getKey()) && requirementMatches(r, nodeName));
    }

    private static boolean requirementMatches(NodeSelectorRequirement requirement, String value) {
        List<String> values = requirement.getValues() == null ? List.of() : requirement.getValues();
        return switch (requirement.getOperator()) {
            case "In" -> value != null && values.contains(value);
            case "NotIn" -> value == null || !values.contains(value);
            case "Exists" -> value != null;
            case "DoesNotExist" -> value == null;
            case "Gt" -> compare(value, values) > 0;
            case "Lt" -> compare(value, values) < 0;
            default -> true;
        };
    }

    /** Gt/Lt compare integers; an unparsable value never matches (0 is neither above nor below). */
    private static int compare(String value, List<String> values) {
        try {
            return Long.compare(Long.parseLong(value), Long.parseLong(values.get(0)));
        } catch (RuntimeException notAnInteger) {
            return 0;
        }
    }

    // --- resources and ports ---

    /** The resource the node lacks for the pod (cpu, memory, ephemeral-storage, pods), or null. */
    private String insufficientResource(Pod pod, Node node) {
        Map<String, Quantity> allocatable = node.getStatus() == null ? null : node.getStatus().getAllocatable();
        if (allocatable == null) {
            return null;
        }
        List<Pod> there = podsByNode.getOrDefault(node.getMetadata().getName(), List.of());
        Quantity podLimit = allocatable.get("pods");
        if (podLimit != null && there.size() + 1 > podLimit.getNumericalAmount().intValue()) {
            return "pods";
        }
        Map<String, BigDecimal> wanted = requests(pod);
        for (String resource : COUNTED_RESOURCES) {
            BigDecimal want = wanted.getOrDefault(resource, BigDecimal.ZERO);
            Quantity total = allocatable.get(resource);
            if (want.signum() == 0 || total == null) {
                continue;
            }
            BigDecimal used = there.stream().map(p -> requests(p).getOrDefault(resource, BigDecimal.ZERO)).reduce(BigDecimal.ZERO, BigDecimal::add);
            if (used.add(want).compareTo(total.getNumericalAmount()) > 0) {
                return resource;
            }
        }
        return null;
    }

    /** What the scheduler reserves for a pod: the larger of its containers' sum and its largest init container, plus overhead. */
    static Map<String, BigDecimal> requests(Pod pod) {
        Map<String, BigDecimal> sum = new HashMap<>();
        for (Container container : pod.getSpec().getContainers() == null ? List.<Container>of() : pod.getSpec().getContainers()) {
            requestsOf(container).forEach((k, v) -> sum.merge(k, v, BigDecimal::add));
        }
        for (Container init : pod.getSpec().getInitContainers() == null ? List.<Container>of() : pod.getSpec().getInitContainers()) {
            if ("Always".equals(init.getRestartPolicy())) {
                // A sidecar runs alongside the containers.
                requestsOf(init).forEach((k, v) -> sum.merge(k, v, BigDecimal::add));
            } else {
                requestsOf(init).forEach((k, v) -> sum.merge(k, v, BigDecimal::max));
            }
        }
        if (pod.getSpec().getOverhead() != null) {
            pod.getSpec().getOverhead().forEach((k, v) -> sum.merge(k, v.getNumericalAmount(), BigDecimal::add));
        }
        return sum;
    }

    private static Map<String, BigDecimal> requestsOf(Container container) {
        Map<String, BigDecimal> requests = new HashMap<>();
        if (container.getResources() != null && container.getResources().getRequests() != null) {
            container.getResources().getRequests().forEach((k, v) -> requests.put(k, v.getNumericalAmount()));
        }
        return requests;
    }

    private boolean hostPortTaken(Pod pod, String node) {
        Set<String> wanted = hostPorts(pod);
        return !wanted.isEmpty() && podsByNode.getOrDefault(node, List.of()).stream().anyMatch(p -> hostPorts(p).stream().anyMatch(wanted::contains));
    }

    private static Set<String> hostPorts(Pod pod) {
        return pod.getSpec().getContainers().stream()
                .flatMap(c -> c.getPorts() == null ? java.util.stream.Stream.<ContainerPort>empty() : c.getPorts().stream())
                .filter(p -> p.getHostPort() != null && p.getHostPort() > 0)
                .map(p -> Objects.toString(p.getProtocol(), "TCP") + "/" + p.getHostPort())
                .collect(Collectors.toSet());
    }

    // --- inter-pod affinity ---

    private boolean podAffinityHolds(Pod pod, Node node) {
        var affinity = pod.getSpec().getAffinity();
        if (affinity == null || affinity.getPodAffinity() == null
                || affinity.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
            return true;
        }
        for (PodAffinityTerm term : affinity.getPodAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()) {
            String domain = labels(node).get(term.getTopologyKey());
            boolean anyMatching = staying().anyMatch(p -> termSelects(term, pod, p));
            // The first pod of a group that selects itself may go anywhere, as in the scheduler.
            if (!anyMatching && termSelects(term, pod, pod)) {
                continue;
            }
            if (domain == null || staying().noneMatch(p -> termSelects(term, pod, p) && domain.equals(domainOf(p, term.getTopologyKey())))) {
                return false;
            }
        }
        return true;
    }

    private boolean podAntiAffinityHolds(Pod pod, Node node) {
        var affinity = pod.getSpec().getAffinity();
        if (affinity != null && affinity.getPodAntiAffinity() != null
                && affinity.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
            for (PodAffinityTerm term : affinity.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()) {
                String domain = labels(node).get(term.getTopologyKey());
                if (domain != null && staying().anyMatch(p -> termSelects(term, pod, p) && domain.equals(domainOf(p, term.getTopologyKey())))) {
                    return false;
                }
            }
        }
        // Symmetry: a pod already there whose anti-affinity rejects this one keeps it out of its domain.
        return staying().noneMatch(existing -> {
            var theirs = existing.getSpec().getAffinity();
            if (theirs == null || theirs.getPodAntiAffinity() == null
                    || theirs.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
                return false;
            }
            return theirs.getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().stream().anyMatch(term -> {
                String domain = labels(node).get(term.getTopologyKey());
                return domain != null && termSelects(term, existing, pod) && domain.equals(domainOf(existing, term.getTopologyKey()));
            });
        });
    }

    /** Whether the term of {@code owner} selects {@code candidate}: its namespaces (default: the owner's) and its label selector. */
    private static boolean termSelects(PodAffinityTerm term, Pod owner, Pod candidate) {
        String namespace = candidate.getMetadata().getNamespace();
        boolean inNamespace;
        if (term.getNamespaces() != null && !term.getNamespaces().isEmpty()) {
            inNamespace = term.getNamespaces().contains(namespace);
        } else if (term.getNamespaceSelector() != null) {
            // Only an empty namespaceSelector ("all namespaces") is judged; one with labels would need the Namespaces.
            inNamespace = isEmpty(term.getNamespaceSelector()) || namespace.equals(owner.getMetadata().getNamespace());
        } else {
            inNamespace = namespace.equals(owner.getMetadata().getNamespace());
        }
        return inNamespace && term.getLabelSelector() != null && PodSelector.of(term.getLabelSelector()).matches(candidate.getMetadata().getLabels());
    }

    private static boolean isEmpty(LabelSelector selector) {
        return (selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty())
                && (selector.getMatchExpressions() == null || selector.getMatchExpressions().isEmpty());
    }

    // --- topology spread ---

    private boolean topologySpreadHolds(Pod pod, Node node) {
        List<TopologySpreadConstraint> constraints = pod.getSpec().getTopologySpreadConstraints();
        if (constraints == null) {
            return true;
        }
        for (TopologySpreadConstraint constraint : constraints) {
            if (!"DoNotSchedule".equals(constraint.getWhenUnsatisfiable())) {
                continue;
            }
            String key = constraint.getTopologyKey();
            String domain = labels(node).get(key);
            if (domain == null) {
                return false;
            }
            PodSelector selector = spreadSelector(constraint, pod);
            // Domains: the nodes the pod's node selector and affinity allow (nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore: the defaults).
            Map<String, Integer> counts = new TreeMap<>();
            for (Node candidate : nodes.values()) {
                String value = labels(candidate).get(key);
                if (value != null && matchesNodeSelectorAndAffinity(pod, candidate)) {
                    int matching = (int) podsByNode.getOrDefault(candidate.getMetadata().getName(), List.of()).stream()
                            .filter(p -> p.getMetadata().getNamespace().equals(pod.getMetadata().getNamespace()))
                            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                            .filter(p -> selector.matches(p.getMetadata().getLabels())).count();
                    counts.merge(value, matching, Integer::sum);
                }
            }
            int min = counts.values().stream().mapToInt(Integer::intValue).min().orElse(0);
            if (constraint.getMinDomains() != null && counts.size() < constraint.getMinDomains()) {
                min = 0;
            }
            if (counts.getOrDefault(domain, 0) + 1 - min > constraint.getMaxSkew()) {
                return false;
            }
        }
        return true;
    }

    /** The constraint's selector, narrowed by matchLabelKeys to the pod's own values (the same revision). */
    private static PodSelector spreadSelector(TopologySpreadConstraint constraint, Pod pod) {
        if (constraint.getLabelSelector() == null) {
            // A constraint without a selector counts no pods.
            return PodSelector.of(null);
        }
        LabelSelector selector = new io.fabric8.kubernetes.api.model.LabelSelectorBuilder(constraint.getLabelSelector()).build();
        Map<String, String> own = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        if (constraint.getMatchLabelKeys() != null) {
            Map<String, String> matchLabels = new LinkedHashMap<>(selector.getMatchLabels() == null ? Map.of() : selector.getMatchLabels());
            constraint.getMatchLabelKeys().stream().filter(own::containsKey).forEach(k -> matchLabels.put(k, own.get(k)));
            selector.setMatchLabels(matchLabels);
        }
        return PodSelector.of(selector);
    }

    private java.util.stream.Stream<Pod> staying() {
        return podsByNode.values().stream().flatMap(List::stream);
    }

    private String domainOf(Pod pod, String topologyKey) {
        Node node = nodes.get(pod.getSpec().getNodeName());
        return node == null ? null : labels(node).get(topologyKey);
    }

    private static Map<String, String> labels(Node node) {
        return node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    }
}
