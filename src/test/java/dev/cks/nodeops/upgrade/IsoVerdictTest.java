package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cks.nodeops.upgrade.IsoVerdict.Result;

/**
 * The ISO canary's script is shell that runs as root on a node, so it is run here for real (this machine's sh,
 * find, sha256sum) against an unpacked binaries ISO in a temporary tree, laid out as CloudStack's ISO build lays
 * it out; its k8s/kubeadm is a stand-in that prints a version and kubeadm's image list for v1.33.4. Its log is
 * read by {@link IsoVerdict#read}, as the operator reads the canary Job's log.
 */
class IsoVerdictTest {
    private static final String TARGET = "1.33.4";

    @TempDir
    Path tree;
    @TempDir
    Path bin;
    private UnpackedIso iso;

    @BeforeEach
    void aGoodIso() throws IOException {
        iso = new UnpackedIso(tree, bin, TARGET);
    }

    @Test
    void aCompleteIsoOfTheTargetPasses() throws Exception {
        IsoVerdict verdict = verify();

        assertThat(verdict.result()).as(verdict.toString()).isEqualTo(Result.Passed);
        assertThat(verdict.problems()).isEmpty();
        assertThat(verdict.checked()).anySatisfy(c -> assertThat(c).isEqualTo("kubeadm: k8s/kubeadm is v1.33.4"))
                .anySatisfy(c -> assertThat(c).startsWith("images: archives for kube-apiserver:v1.33.4").contains("coredns:v1.12.0").contains("etcd:3.5.21-0"))
                .anySatisfy(c -> assertThat(c).isEqualTo("cni: cni/cni-plugins-amd64.tgz"))
                .anySatisfy(c -> assertThat(c).isEqualTo("cri-tools: cri-tools/crictl-linux-amd64.tar.gz"))
                .anySatisfy(c -> assertThat(c).isEqualTo("manifests: network.yaml present"))
                .anySatisfy(c -> assertThat(c).isEqualTo("checksums: the ISO carries no .sha256 files"));
    }

    @Test
    void anIsoWithoutKubeadmFailsAndSaysSo() throws Exception {
        iso.delete("k8s/kubeadm");

        IsoVerdict verdict = verify();

        assertThat(verdict.result()).isEqualTo(Result.Failed);
        assertThat(verdict.problems()).containsExactly("kubeadm: the ISO has no k8s/kubeadm");
    }

    @Test
    void aKubeadmOfAnotherVersionFails() throws Exception {
        kubeadm("v1.32.7");

        IsoVerdict verdict = verify();

        assertThat(verdict.result()).isEqualTo(Result.Failed);
        assertThat(verdict.problems()).containsExactly("kubeadm: k8s/kubeadm is v1.32.7, not the target v1.33.4");
    }

    @Test
    void anImageKubeadmNamesWithoutItsArchiveFailsNamingTheArchive() throws Exception {
        iso.delete("docker/etcd:3.5.21-0.tar");
        iso.delete("docker/pause:3.10.tar");

        IsoVerdict verdict = verify();

        assertThat(verdict.result()).isEqualTo(Result.Failed);
        assertThat(verdict.problems()).containsExactly("images: no archive for docker/pause:3.10.tar docker/etcd:3.5.21-0.tar");
    }

    /** The test bed's ISO has no CoreDNS (the bed runs none): the operator passes --without coredns for a cluster that runs none. */
    @Test
    void anAddonTheClusterDoesNotRunNeedsNoArchive() throws Exception {
        iso.delete("docker/coredns:v1.12.0.tar");

        assertThat(verify().problems()).containsExactly("images: no archive for docker/coredns:v1.12.0.tar");
        IsoVerdict without = verify("--without", "coredns");

        assertThat(without.result()).as(without.toString()).isEqualTo(Result.Passed);
        assertThat(without.checked()).anySatisfy(c -> assertThat(c).endsWith("(not required, this cluster runs none: coredns)"));
    }

    @Test
    void missingCniCrictlAndManifestsAreEachNamed() throws Exception {
        iso.delete("cni/cni-plugins-amd64.tgz");
        iso.delete("cri-tools/crictl-linux-amd64.tar.gz");
        iso.delete("dashboard.yaml");

        IsoVerdict verdict = verify();

        assertThat(verdict.result()).isEqualTo(Result.Failed);
        assertThat(verdict.problems()).containsExactly("cni: the ISO has no cni/cni-plugins-*64.tgz",
                "cri-tools: the ISO has no cri-tools/crictl-linux-*64.tar.gz", "manifests: the ISO has no dashboard.yaml");
    }

    @Test
    void checksumsTheIsoCarriesAreChecked() throws Exception {
        write("k8s/kubelet.sha256", ScriptTrust.sha256("contents of k8s/kubelet") + "  kubelet\n");
        write("k8s/kubectl.sha256", ScriptTrust.sha256("something else"));

        IsoVerdict verdict = verify();

        assertThat(verdict.result()).isEqualTo(Result.Failed);
        assertThat(verdict.problems()).containsExactly("checksums: k8s/kubectl does not match k8s/kubectl.sha256");
        assertThat(verdict.checked()).contains("checksums: 1 file(s) match their .sha256");
    }

    @Test
    void aLogWithoutAVerdictIsNoVerdictAndAPassedBesideAFailedCheckIsAFailure() {
        assertThat(IsoVerdict.read("iso-canary: ok iso: /dev/sr0 holds k8s/\nKilled\n").result()).isEqualTo(Result.None);
        assertThat(IsoVerdict.read(null).result()).isEqualTo(Result.None);
        IsoVerdict contradictory = IsoVerdict.read("iso-canary: bad kubeadm: the ISO has no k8s/kubeadm\niso-canary: verdict passed\n");
        assertThat(contradictory.result()).isEqualTo(Result.Failed);
        assertThat(contradictory.problems()).containsExactly("kubeadm: the ISO has no k8s/kubeadm");
    }

    private void kubeadm(String version) throws IOException {
        iso.kubeadm(version);
    }

    private void write(String file, String content) throws IOException {
        iso.write(file, content);
    }

    private IsoVerdict verify(String... extra) throws IOException, InterruptedException {
        List<String> arguments = new ArrayList<>(List.of(TARGET));
        arguments.addAll(List.of(extra));
        return IsoVerdict.read(iso.verify(arguments));
    }
}
