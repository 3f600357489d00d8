package dev.cks.nodeops.drain;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The heap a cluster-wide pod list takes as a DrainReport pass or a preflight holds it: the pods as listed, and their
 * {@link LeanCopies}. The pods are what the API server lists for Deployment pods (managed fields, kubectl's
 * last-applied copy, a service account's projected volume, the default tolerations, container statuses), of 50
 * workloads over 1,000 nodes, parsed from JSON by the client's own serialization. Run from the project root:
 *
 * <pre>
 * ./mvnw -B -q test-compile dependency:build-classpath -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -XX:+UseSerialGC -Xmx1g -cp target/test-classes:target/classes:$(cat target/test-classpath.txt) dev.cks.nodeops.drain.LeanCopiesBenchmark
 * </pre>
 *
 * The figure is the heap in use after full collections, with every pod of the list reachable, less the same before.
 */
public final class LeanCopiesBenchmark {
    private static final int PODS = Integer.getInteger("benchmark.pods", 10_000);
    private static final int WORKLOADS = 50;
    private static final int NODES = 1_000;
    private static final String LISTED = """
            {"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"2026-12-03T10:00:00Z","generateName":"app-%1$d-5d8f9c7b4-",
            "labels":{"app":"app-%1$d","pod-template-hash":"5d8f9c7b4"},"name":"app-%1$d-5d8f9c7b4-%2$d","namespace":"shop",
            "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Pod\\",\\"metadata\\":{\\"labels\\":{\\"app\\":\\"app-%1$d\\"}}}"},
            "ownerReferences":[{"apiVersion":"apps/v1","blockOwnerDeletion":true,"controller":true,"kind":"ReplicaSet","name":"app-%1$d-5d8f9c7b4","uid":"1b9f0a5e-8c1a-4c1e-9a6e-3c0b8f1d2e%1$02d"}],
            "resourceVersion":"%2$d","uid":"%3$s",
            "managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},
            "f:ownerReferences":{".":{},"k:{\\"uid\\":\\"1b9f0a5e\\"}":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"app\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},
            "f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}}}}}},"manager":"kube-controller-manager","operation":"Update","time":"2026-12-03T10:00:00Z"},
            {"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:phase":{},"f:podIP":{}}},"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-12-03T10:00:01Z"}]},
            "spec":{"containers":[{"image":"registry.example/app:1","imagePullPolicy":"IfNotPresent","name":"app","ports":[{"containerPort":8080,"protocol":"TCP"}],
            "env":[{"name":"MODE","value":"serve"}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}},"terminationMessagePath":"/dev/termination-log",
            "terminationMessagePolicy":"File","volumeMounts":[{"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","name":"kube-api-access-%2$05d","readOnly":true}]}],
            "dnsPolicy":"ClusterFirst","enableServiceLinks":true,"nodeName":"node-%4$d","preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always",
            "schedulerName":"default-scheduler","securityContext":{},"serviceAccount":"default","serviceAccountName":"default","terminationGracePeriodSeconds":30,
            "tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},
            {"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}],
            "volumes":[{"name":"kube-api-access-%2$05d","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
            {"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"kube-root-ca.crt"}},
            {"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}}]},
            "status":{"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-12-03T10:00:01Z","status":"True","type":"Ready"}],
            "containerStatuses":[{"containerID":"containerd://%3$s","image":"registry.example/app:1","imageID":"registry.example/app@sha256:0","lastState":{},"name":"app",
            "ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-12-03T10:00:01Z"}}}],"hostIP":"10.0.0.1","phase":"Running",
            "podIP":"10.244.1.2","qosClass":"Burstable","startTime":"2026-12-03T10:00:00Z"}}
            """;

    /** Holds the measured list so the collector cannot free it before the heap is read. */
    private static volatile Object keptAlive;

    private LeanCopiesBenchmark() {
    }

    public static void main(String[] args) {
        System.out.printf(Locale.ROOT, "Java %s, max heap %d MiB, %d pods of %d workloads on %d nodes, %d bytes of JSON a pod%n",
                System.getProperty("java.version"), Runtime.getRuntime().maxMemory() >> 20, PODS, WORKLOADS, NODES, listed(0).length());
        System.out.println("| pods kept | heap (MiB) | per pod (bytes) |");
        System.out.println("|---|---:|---:|");
        measure("as listed", UnaryOperator.identity());
        LeanCopies copies = new LeanCopies();
        measure("lean copies", copies::pod);
    }

    private static void measure(String what, UnaryOperator<Pod> keep) {
        KubernetesSerialization serialization = new KubernetesSerialization();
        long before = heapInUse();
        List<Pod> pods = new ArrayList<>(PODS);
        for (int i = 0; i < PODS; i++) {
            pods.add(keep.apply(serialization.unmarshal(listed(i), Pod.class)));
        }
        keptAlive = pods;
        long used = heapInUse() - before;
        System.out.printf(Locale.ROOT, "| %s | %.1f | %d |%n", what, used / 1048576.0, used / PODS);
        keptAlive = null;
    }

    /** A pod of workload i % 50, on node i % 1,000, as listed; workload w's pods sit on nodes w, w + 50, …. */
    private static String listed(int i) {
        return String.format(Locale.ROOT, LISTED, i % WORKLOADS, i, UUID.nameUUIDFromBytes(Integer.toString(i).getBytes()), i % NODES);
    }

    private static long heapInUse() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
