package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

/** Checks the schema cannot express; each problem is a sentence that says what to change. */
final class NodeUpgradeValidation {
    private NodeUpgradeValidation() {
    }

    static List<String> problems(NodeUpgradeSpec spec) {
        List<String> problems = new ArrayList<>();
        if (spec == null) {
            problems.add("spec is missing");
            return problems;
        }
        if (spec.getExecutor() == null) {
            problems.add("spec.executor is missing: set executor.type to CloudStackIso or Script");
        }
        return problems;
    }
}
