package dev.cks.nodeops.testbed;

import java.util.Comparator;

import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * Runs {@code LeastPrivilegeIT} after every other test class of the run, because it judges the calls
 * all the others made; the others keep JUnit's default order.
 */
public class LeastPrivilegeLast implements ClassOrderer {
    @Override
    public void orderClasses(ClassOrdererContext context) {
        // List.sort is stable: everything but LeastPrivilegeIT stays where it was.
        context.getClassDescriptors().sort(Comparator.comparing((ClassDescriptor d) -> d.getTestClass().getSimpleName().equals("LeastPrivilegeIT")));
    }
}
