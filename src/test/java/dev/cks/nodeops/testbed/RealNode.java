package dev.cks.nodeops.testbed;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A real-node test class that needs a node of its own, started at these versions ({@link TestBed#freshReal}):
 * the running real node is torn down (host checked) and a new one started before the class runs.
 * Without it a class gets the real node that runs (or one at the bed's defaults).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface RealNode {
    /** kubeadm and the control plane, e.g. v1.34.4 (built with `hack/testbed.sh build-node --control-plane`). */
    String controlPlane();

    /** The kubelet the node starts with. */
    String kubelet();
}
