package dev.cks.nodeops.testbed;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives `*RealIT` tests the real-mode {@link TestBed} (a kubeadm node on this machine with KWOK
 * workers). If it cannot be started the test fails with the reason; it is never skipped.
 */
public class RealNodeExtension implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestBed.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) throws ParameterResolutionException {
        return TestBed.sharedReal();
    }
}
