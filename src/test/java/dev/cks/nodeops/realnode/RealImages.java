package dev.cks.nodeops.realnode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cks.nodeops.deploy.ReleaseVersion;
import dev.cks.nodeops.testbed.TestBed;

/** The operator's image as users build it (hack/image.sh) and import it on an air-gapped node. */
final class RealImages {
    private RealImages() {
    }

    /** Builds target/cks-node-operator-TAG.{oci,docker}.tar; tag null is the chart's appVersion. */
    static void build(TestBed bed, String tag) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(List.of("bash", "hack/image.sh"));
        if (tag != null) {
            builder.environment().put("IMAGE_TAG", tag);
        }
        run(bed, builder, "hack/image.sh");
    }

    /**
     * The offline bundle as an air-gapped site gets it: built by hack/bundle.sh, unpacked into target/realnode-bundle,
     * checked with its SHA256SUMS. Returns the unpacked directory.
     */
    static Path offlineBundle(TestBed bed) throws IOException, InterruptedException {
        run(bed, new ProcessBuilder(List.of("bash", "hack/bundle.sh")), "hack/bundle.sh");
        String name = "cks-node-operator-" + ReleaseVersion.current() + "-offline";
        Path unpacked = bed.projectRoot().resolve("target/realnode-bundle");
        run(bed, new ProcessBuilder(List.of("rm", "-rf", unpacked.toString())), "rm");
        Files.createDirectories(unpacked);
        run(bed, new ProcessBuilder(List.of("tar", "-xzf", bed.projectRoot().resolve("target/" + name + ".tar.gz").toString(), "-C",
                unpacked.toString())), "unpacking the bundle");
        Path bundle = bundleDirectory(bed);
        run(bed, new ProcessBuilder(List.of("sh", "-c", "cd '" + bundle + "' && sha256sum -c SHA256SUMS")), "sha256sum -c SHA256SUMS");
        return bundle;
    }

    /** Where {@link #offlineBundle} unpacked the bundle. */
    static Path bundleDirectory(TestBed bed) {
        return bed.projectRoot().resolve("target/realnode-bundle/cks-node-operator-" + ReleaseVersion.current() + "-offline");
    }

    /** `ctr images import [options] ARCHIVE` into the real node's containerd. */
    static void importArchive(TestBed bed, String... optionsAndArchive) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("bash", "hack/testbed.sh", "real-import"));
        command.addAll(List.of(optionsAndArchive));
        run(bed, new ProcessBuilder(command), "real-import " + String.join(" ", optionsAndArchive));
    }

    private static void run(TestBed bed, ProcessBuilder builder, String what) throws IOException, InterruptedException {
        Path log = bed.projectRoot().resolve("target/realnode-images.log");
        builder.directory(bed.projectRoot().toFile()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        Process process = builder.start();
        if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
            process.destroyForcibly();
            List<String> lines = Files.readAllLines(log);
            throw new IllegalStateException(what + " failed:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())));
        }
    }
}
