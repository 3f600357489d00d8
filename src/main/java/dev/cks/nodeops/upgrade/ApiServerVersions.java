package dev.cks.nodeops.upgrade;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;

/** The versions of the cluster's API servers, for the version-skew guard: the one answering, and every kubeadm static pod's image. */
@FunctionalInterface
interface ApiServerVersions {
    List<String> read();

    /**
     * {@code /version} answers for one API server; in a cluster whose control plane is half-way through an
     * upgrade the others may be older, so the kube-apiserver static pods kubeadm runs in kube-system are
     * read too (their image tag is their version).
     */
    static ApiServerVersions on(KubernetesClient client) {
        return () -> {
            List<String> versions = new ArrayList<>();
            versions.add(client.getKubernetesVersion().getGitVersion());
            for (Pod pod : client.pods().inNamespace("kube-system").withLabel("component", "kube-apiserver").list().getItems()) {
                for (Container container : pod.getSpec().getContainers()) {
                    String image = container.getImage();
                    int tag = image == null ? -1 : image.lastIndexOf(':');
                    if ("kube-apiserver".equals(container.getName()) && tag > image.lastIndexOf('/')) {
                        versions.add(image.substring(tag + 1));
                    }
                }
            }
            return versions;
        };
    }
}
