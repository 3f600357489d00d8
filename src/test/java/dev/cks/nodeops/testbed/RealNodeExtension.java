package dev.cks.nodeops.testbed;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives `*RealIT` tests the real-mode {@link TestBed} (a kubeadm node on this machine with KWOK
 * workers): a class annotated {@link RealNode} gets one started for it, others the running one.
 * If it cannot be started the test fails with the reason; it is never skipped.
 */
public class RealNodeExtension implements ParameterResolver {
    /** The bed each {@link RealNode} class got, so that all its parameters share it. */
    private static final Map<Class<?>, TestBed> STARTED_FOR = new ConcurrentHashMap<>();

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == TestBed.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) throws ParameterResolutionException {
        Class<?> testClass = context.getRequiredTestClass();
        RealNode versions = testClass.getAnnotation(RealNode.class);
        if (versions == null) {
            return TestBed.sharedReal();
        }
        return STARTED_FOR.computeIfAbsent(testClass, c -> TestBed.freshReal(versions.controlPlane(), versions.kubelet()));
    }
}
