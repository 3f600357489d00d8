package dev.cks.nodeops.testbed;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Gives tests the shared {@link TestBed} (or its client). If the bed cannot be started the test
 * fails with the reason; it is never skipped.
 */
public class TestBedExtension implements ParameterResolver {
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == TestBed.class || type == KubernetesClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) throws ParameterResolutionException {
        TestBed bed = TestBed.shared();
        return parameter.getParameter().getType() == TestBed.class ? bed : bed.client();
    }
}
