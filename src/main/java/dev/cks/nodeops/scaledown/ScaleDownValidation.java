package dev.cks.nodeops.scaledown;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/** Checks the schema cannot express; each problem is a sentence that says what to change. */
final class ScaleDownValidation {
    private ScaleDownValidation() {
    }

    static List<String> problems(ScaleDownSpec spec) {
        List<String> problems = new ArrayList<>();
        if (spec == null) {
            problems.add("spec is missing");
            return problems;
        }
        boolean byName = spec.getNodeNames() != null && !spec.getNodeNames().isEmpty();
        if (byName == (spec.getCount() != null)) {
            problems.add("set exactly one of spec.nodeNames and spec.count");
        }
        if (byName && new HashSet<>(spec.getNodeNames()).size() != spec.getNodeNames().size()) {
            problems.add("spec.nodeNames lists a node twice");
        }
        return problems;
    }
}
