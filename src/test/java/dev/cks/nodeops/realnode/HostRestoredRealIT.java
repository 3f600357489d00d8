package dev.cks.nodeops.realnode;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import dev.cks.nodeops.testbed.RealNodeExtension;
import dev.cks.nodeops.testbed.TestBed;

/**
 * The last real-mode test (the real-node group orders classes by @Order): tears the real node down
 * and compares the host with the snapshot taken before the node started, file by file: sysctls,
 * iptables and nftables, mounts, links and addresses, loop devices, cgroups, fixed paths, daemons.
 * First it shows that the snapshot sees what a running node changes, so an equal "after" means
 * something.
 */
@ExtendWith(RealNodeExtension.class)
@Order(Integer.MAX_VALUE)
class HostRestoredRealIT {
    static final List<String> STATE_FILES = List.of("sysctl", "iptables", "nft-tables", "mounts", "links", "addresses",
            "loop-devices", "cgroups", "paths", "daemons");

    @Test
    void theTeardownLeavesTheHostAsItWas(TestBed bed) throws Exception {
        Path target = bed.projectRoot().resolve("target");
        Path before = target.resolve("realnode-host-before");
        Path during = target.resolve("realnode-host-during");
        Path after = target.resolve("realnode-host-after");
        copy(Path.of(bed.realNode("stateDir"), "host-before"), before);
        hostState(bed, during);

        assertThat(Files.readString(during.resolve("links"))).contains("cks0");
        assertThat(Files.readString(before.resolve("links"))).doesNotContain("cks0");
        assertThat(Files.readString(during.resolve("iptables"))).contains("KUBE-SERVICES");
        assertThat(Files.readString(during.resolve("paths"))).contains("/etc/kubernetes", "/var/lib/kubelet");
        assertThat(Files.readString(during.resolve("daemons"))).contains("kubelet", "containerd-shim");
        assertThat(Files.readString(during.resolve("mounts"))).as("the containers' root file systems").contains(bed.realNode("stateDir") + "/");
        assertThat(Files.readString(during.resolve("sysctl"))).contains("net.ipv4.ip_forward = 1");

        TestBed.closeSharedReal();
        hostState(bed, after);
        for (String file : STATE_FILES) {
            assertThat(Files.readAllLines(after.resolve(file))).as("%s after the teardown", file)
                    .containsExactlyElementsOf(Files.readAllLines(before.resolve(file)));
        }
    }

    private static void hostState(TestBed bed, Path dir) throws IOException, InterruptedException {
        deleteRecursively(dir);
        Process process = new ProcessBuilder("bash", "hack/testbed.sh", "host-state", dir.toString())
                .directory(bed.projectRoot().toFile()).inheritIO().start();
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(process.exitValue()).isZero();
    }

    private static void copy(Path from, Path to) throws IOException {
        deleteRecursively(to);
        Files.createDirectories(to);
        try (var files = Files.list(from)) {
            for (Path file : files.toList()) {
                Files.copy(file, to.resolve(file.getFileName()));
            }
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var walk = Files.walk(dir)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }
}
