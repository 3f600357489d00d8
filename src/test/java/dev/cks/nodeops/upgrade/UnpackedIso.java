package dev.cks.nodeops.upgrade;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A CKS binaries ISO of one Kubernetes version unpacked into a directory, laid out as CloudStack's ISO build lays it
 * out; its k8s/kubeadm is a stand-in that prints a version and kubeadm's image list for the ISO's version. The ISO
 * canary's script (verify-iso.sh, as the operator ships it) runs against it for real (this machine's sh, find,
 * sha256sum), with the arguments the canary's Job gives it, and prints what it would print on a node.
 */
final class UnpackedIso {
    private final Path tree;
    private final Path bin;
    private final String version;
    private final List<String> images;

    /** A complete ISO of {@code version} (e.g. 1.33.4) in {@code tree}; {@code bin} holds the script while it runs. */
    UnpackedIso(Path tree, Path bin, String version) throws IOException {
        this.tree = tree;
        this.bin = bin;
        this.version = version;
        this.images = List.of("registry.k8s.io/kube-apiserver:v" + version, "registry.k8s.io/kube-controller-manager:v" + version,
                "registry.k8s.io/kube-scheduler:v" + version, "registry.k8s.io/kube-proxy:v" + version, "registry.k8s.io/coredns/coredns:v1.12.0",
                "registry.k8s.io/pause:3.10", "registry.k8s.io/etcd:3.5.21-0");
        kubeadm("v" + version);
        for (String file : List.of("k8s/kubelet", "k8s/kubectl", "cni/cni-plugins-amd64.tgz", "cri-tools/crictl-linux-amd64.tar.gz", "network.yaml",
                "dashboard.yaml")) {
            write(file, "contents of " + file);
        }
        for (String image : images) {
            write("docker/" + image.substring(image.lastIndexOf('/') + 1) + ".tar", "an image archive");
        }
    }

    /** The stand-in kubeadm says it is {@code printed}; its image list answers for the ISO's version only. */
    void kubeadm(String printed) throws IOException {
        StringBuilder list = new StringBuilder();
        images.forEach(image -> list.append("echo ").append(image).append('\n'));
        write("k8s/kubeadm", "#!/bin/sh\ncase \"$1 $2\" in\n  'version -o') echo " + printed + " ;;\n  'config images') [ \"$5\" = v" + version
                + " ] || exit 3\n" + list + " ;;\n  *) exit 2 ;;\nesac\n");
    }

    void write(String file, String content) throws IOException {
        Path path = tree.resolve(file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, content);
    }

    void delete(String file) throws IOException {
        Files.delete(tree.resolve(file));
    }

    /**
     * What verify-iso.sh prints for this ISO: {@code arguments} are the script's (the target version, then any
     * {@code --without}), as the canary's Job passes them; the script then reads this tree instead of a mounted ISO.
     */
    String verify(List<String> arguments) throws IOException, InterruptedException {
        Path script = bin.resolve("verify-iso.sh");
        Files.writeString(script, CloudStackIsoExecutor.canaryScript());
        List<String> command = new ArrayList<>(List.of("sh", script.toString()));
        command.addAll(arguments);
        command.addAll(List.of("--tree", tree.toString()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("verify-iso.sh " + arguments + " did not end within 30 s; its output: " + output);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("verify-iso.sh " + arguments + " ended " + process.exitValue() + " without a verdict: " + output);
        }
        return output;
    }
}
