package dev.cks.nodeops.realnode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

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

    /** `ctr images import` into the real node's containerd. */
    static void importArchive(TestBed bed, String archive) throws IOException, InterruptedException {
        run(bed, new ProcessBuilder(List.of("bash", "hack/testbed.sh", "real-import", archive)), "real-import " + archive);
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
