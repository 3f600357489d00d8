package dev.cks.nodeops.drain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;

/**
 * A label selector as kubectl parses `--pod-selector` (`a=b,c!=d,e in (x,y),f notin (z),g,!h`), and
 * the same requirements built from a metav1.LabelSelector (a PodDisruptionBudget's, a drain's, a NodeUpgrade's), so all
 * match labels one way. Written back in kubectl's syntax, whichever it was built from.
 */
public final class PodSelector {
    public enum Operator { EQUALS, NOT_EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST }

    public record Requirement(String key, Operator operator, Set<String> values) {
        boolean matches(Map<String, String> labels) {
            String value = labels.get(key);
            return switch (operator) {
                case EQUALS, IN -> value != null && values.contains(value);
                // As in Kubernetes: a pod without the key satisfies `!=` and `notin`.
                case NOT_EQUALS, NOT_IN -> value == null || !values.contains(value);
                case EXISTS -> value != null;
                case DOES_NOT_EXIST -> value == null;
            };
        }
    }

    private static final PodSelector EVERYTHING = new PodSelector(List.of(), "");
    private static final PodSelector NOTHING = new PodSelector(null, "<nothing>");
    private static final Pattern KEY = Pattern.compile("([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?");
    private static final Pattern VALUE = Pattern.compile("([a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?)?");
    /** Plain scalars YAML 1.1 reads as booleans or null, not strings. */
    private static final Set<String> YAML_WORDS = Set.of("true", "false", "yes", "no", "y", "n", "on", "off", "null");
    private static final Pattern SET_REQUIREMENT = Pattern.compile("\\s*(\\S+?)\\s+(in|notin)\\s*\\(([^)]*)\\)\\s*");

    private final List<Requirement> requirements;
    private final String text;

    /** The user's podSelector cannot be parsed: the message says why and what to write instead. */
    public static final class InvalidSelector extends RuntimeException {
        InvalidSelector(String message) {
            super(message);
        }
    }

    private PodSelector(List<Requirement> requirements, String text) {
        this.requirements = requirements;
        this.text = text;
    }

    /**
     * Parses the podSelector option; blank selects every pod.
     *
     * @throws InvalidSelector with a sentence users can act on
     */
    public static PodSelector parse(String selector) {
        if (selector == null || selector.isBlank()) {
            return EVERYTHING;
        }
        List<Requirement> requirements = new ArrayList<>();
        for (String term : splitTerms(selector)) {
            requirements.add(parseTerm(term.strip(), selector));
        }
        return new PodSelector(List.copyOf(requirements), selector.strip());
    }

    /**
     * A metav1.LabelSelector (a PodDisruptionBudget's, a drain's, a NodeUpgrade's); like the disruption controller, a null
     * selector matches nothing and an empty one everything. Where an unset selector means every object, the caller says so
     * ({@link PodSelection}, NodeSelection).
     */
    public static PodSelector of(LabelSelector selector) {
        if (selector == null) {
            return NOTHING;
        }
        List<Requirement> requirements = new ArrayList<>();
        if (selector.getMatchLabels() != null) {
            selector.getMatchLabels().forEach((k, v) -> requirements.add(new Requirement(k, Operator.EQUALS, Set.of(v))));
        }
        if (selector.getMatchExpressions() != null) {
            for (LabelSelectorRequirement expression : selector.getMatchExpressions()) {
                Set<String> values = expression.getValues() == null ? Set.of() : Set.copyOf(expression.getValues());
                Operator operator = switch (expression.getOperator()) {
                    case "In" -> Operator.IN;
                    case "NotIn" -> Operator.NOT_IN;
                    case "Exists" -> Operator.EXISTS;
                    case "DoesNotExist" -> Operator.DOES_NOT_EXIST;
                    default -> null;
                };
                if (operator == null) {
                    // Kubernetes refuses such a selector; were one read anyway, it selects nothing rather than more.
                    return new PodSelector(null, kubectlSyntax(selector));
                }
                requirements.add(new Requirement(expression.getKey(), operator, values));
            }
        }
        return new PodSelector(List.copyOf(requirements), kubectlSyntax(selector));
    }

    /** Every pod: what no selector, an empty one and a blank podSelector select. */
    public static PodSelector everything() {
        return EVERYTHING;
    }

    /** The pods both select: every requirement of both must hold. */
    public PodSelector and(PodSelector other) {
        if (requirements == null || other.requirements == null) {
            return NOTHING;
        }
        if (other.requirements.isEmpty()) {
            return this;
        }
        if (requirements.isEmpty()) {
            return other;
        }
        List<Requirement> both = new ArrayList<>(requirements);
        both.addAll(other.requirements);
        return new PodSelector(List.copyOf(both), text + "," + other.text);
    }

    /**
     * The same requirements as a metav1.LabelSelector, which Kubernetes matches the same way: {@code a=b} in matchLabels (a
     * second value for the key as In, which no pod meets with the first), {@code a!=b} as NotIn, {@code !a} as DoesNotExist.
     */
    public LabelSelector toLabelSelector() {
        Map<String, String> matchLabels = new LinkedHashMap<>();
        List<LabelSelectorRequirement> matchExpressions = new ArrayList<>();
        for (Requirement requirement : requirements()) {
            String key = requirement.key();
            List<String> values = new ArrayList<>(new TreeSet<>(requirement.values()));
            if (requirement.operator() == Operator.EQUALS && !matchLabels.containsKey(key)) {
                matchLabels.put(key, values.get(0));
                continue;
            }
            String operator = switch (requirement.operator()) {
                case EQUALS, IN -> "In";
                case NOT_EQUALS, NOT_IN -> "NotIn";
                case EXISTS -> "Exists";
                case DOES_NOT_EXIST -> "DoesNotExist";
            };
            matchExpressions.add(new LabelSelectorRequirement(key, operator, values.isEmpty() ? null : values));
        }
        return new LabelSelector(matchExpressions.isEmpty() ? null : matchExpressions, matchLabels.isEmpty() ? null : matchLabels);
    }

    /**
     * A label selector as one would write it in a spec, in YAML's flow style, e.g. {@code {matchLabels: {app: web},
     * matchExpressions: [{key: tier, operator: NotIn, values: [cache]}]}}: what a deprecation tells users to write.
     */
    public static String flowYaml(LabelSelector selector) {
        List<String> parts = new ArrayList<>();
        if (selector.getMatchLabels() != null && !selector.getMatchLabels().isEmpty()) {
            parts.add(selector.getMatchLabels().entrySet().stream().map(e -> e.getKey() + ": " + yamlString(e.getValue()))
                    .collect(Collectors.joining(", ", "matchLabels: {", "}")));
        }
        if (selector.getMatchExpressions() != null && !selector.getMatchExpressions().isEmpty()) {
            parts.add(selector.getMatchExpressions().stream().map(e -> "{key: " + e.getKey() + ", operator: " + e.getOperator()
                            + (e.getValues() == null || e.getValues().isEmpty() ? ""
                                    : e.getValues().stream().map(PodSelector::yamlString).collect(Collectors.joining(", ", ", values: [", "]")))
                            + "}")
                    .collect(Collectors.joining(", ", "matchExpressions: [", "]")));
        }
        return "{" + String.join(", ", parts) + "}";
    }

    /** As kubectl writes a selector ({@code -l}), e.g. {@code pool=a,zone in (x,y),!node-role.kubernetes.io/control-plane}. */
    private static String kubectlSyntax(LabelSelector selector) {
        List<String> terms = new ArrayList<>();
        if (selector.getMatchLabels() != null) {
            selector.getMatchLabels().forEach((key, value) -> terms.add(key + "=" + value));
        }
        for (LabelSelectorRequirement requirement : selector.getMatchExpressions() == null ? List.<LabelSelectorRequirement>of()
                : selector.getMatchExpressions()) {
            String values = String.join(",", new TreeSet<>(requirement.getValues() == null ? List.of() : requirement.getValues()));
            terms.add(switch (String.valueOf(requirement.getOperator())) {
                case "In" -> requirement.getKey() + " in (" + values + ")";
                case "NotIn" -> requirement.getKey() + " notin (" + values + ")";
                case "Exists" -> requirement.getKey();
                case "DoesNotExist" -> "!" + requirement.getKey();
                default -> requirement.getKey() + " " + requirement.getOperator() + " (" + values + ")";
            });
        }
        return String.join(",", terms);
    }

    /** A label value as a YAML string: quoted where YAML would read something else (empty, a number, a boolean, null). */
    private static String yamlString(String value) {
        return value.isEmpty() || !Character.isLetter(value.charAt(0)) || YAML_WORDS.contains(value.toLowerCase(java.util.Locale.ROOT))
                ? "'" + value + "'" : value;
    }

    public boolean matches(Map<String, String> labels) {
        if (requirements == null) {
            return false;
        }
        Map<String, String> safe = labels == null ? Map.of() : labels;
        return requirements.stream().allMatch(r -> r.matches(safe));
    }

    public List<Requirement> requirements() {
        return requirements == null ? List.of() : requirements;
    }

    @Override
    public String toString() {
        return text;
    }

    /** Splits at commas that are not inside the parentheses of a set requirement. */
    private static List<String> splitTerms(String selector) {
        List<String> terms = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < selector.length(); i++) {
            char c = selector.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                terms.add(selector.substring(start, i));
                start = i + 1;
            }
        }
        terms.add(selector.substring(start));
        return terms;
    }

    private static Requirement parseTerm(String term, String selector) {
        if (term.isEmpty()) {
            throw invalid(selector, "it has an empty requirement (two commas in a row or a trailing comma)");
        }
        Matcher set = SET_REQUIREMENT.matcher(term);
        if (set.matches()) {
            Set<String> values = new java.util.LinkedHashSet<>();
            for (String value : set.group(3).split(",")) {
                values.add(checkValue(value.strip(), selector));
            }
            Operator operator = set.group(2).equals("in") ? Operator.IN : Operator.NOT_IN;
            return new Requirement(checkKey(set.group(1), selector), operator, Set.copyOf(values));
        }
        if (term.startsWith("!")) {
            return new Requirement(checkKey(term.substring(1).strip(), selector), Operator.DOES_NOT_EXIST, Set.of());
        }
        int notEquals = term.indexOf("!=");
        if (notEquals >= 0) {
            return new Requirement(checkKey(term.substring(0, notEquals).strip(), selector), Operator.NOT_EQUALS,
                    Set.of(checkValue(term.substring(notEquals + 2).strip(), selector)));
        }
        int equals = term.indexOf('=');
        if (equals >= 0) {
            int valueStart = term.startsWith("==", equals) ? equals + 2 : equals + 1;
            return new Requirement(checkKey(term.substring(0, equals).strip(), selector), Operator.EQUALS,
                    Set.of(checkValue(term.substring(valueStart).strip(), selector)));
        }
        return new Requirement(checkKey(term, selector), Operator.EXISTS, Set.of());
    }

    private static String checkKey(String key, String selector) {
        if (!KEY.matcher(key).matches()) {
            throw invalid(selector, "'" + key + "' is not a valid label key");
        }
        return key;
    }

    private static String checkValue(String value, String selector) {
        if (value.length() > 63 || !VALUE.matcher(value).matches()) {
            throw invalid(selector, "'" + value + "' is not a valid label value");
        }
        return value;
    }

    private static InvalidSelector invalid(String selector, String why) {
        return new InvalidSelector("The podSelector '" + selector + "' is not a valid label selector: " + why
                + ". Write it like kubectl's --pod-selector, e.g. 'app=web,tier!=cache,zone in (a,b),!legacy', or better (podSelector is"
                + " deprecated) as spec.drain.selector, with matchLabels and matchExpressions.");
    }
}
