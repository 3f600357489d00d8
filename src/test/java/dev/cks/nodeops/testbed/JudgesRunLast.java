package dev.cks.nodeops.testbed;

import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * Runs the classes that judge the whole run after every other test class: {@code SecretsScanIT} (the
 * keys in everything the operators wrote) and then {@code LeastPrivilegeIT} (the calls all the others
 * made, its own included); the others keep JUnit's default order.
 */
public class JudgesRunLast implements ClassOrderer {
    private static final List<String> JUDGES = List.of("SecretsScanIT", "LeastPrivilegeIT");

    @Override
    public void orderClasses(ClassOrdererContext context) {
        // List.sort is stable: everything but the judges stays where it was.
        context.getClassDescriptors().sort(Comparator.comparingInt((ClassDescriptor d) -> JUDGES.indexOf(d.getTestClass().getSimpleName())));
    }
}
