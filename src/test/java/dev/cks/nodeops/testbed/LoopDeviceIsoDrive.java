package dev.cks.nodeops.testbed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.cks.nodeops.cloudstack.simulator.IsoDrive;

/**
 * The CD-ROM drive of the VM that is this machine (the real node): an ISO attached through the
 * simulator becomes a read-only loop device (`losetup`), so the node's upgrade script finds it by
 * `blkid -t TYPE=iso9660` as it finds CloudStack's CD-ROM on a CKS VM; a detach deletes the loop
 * device. Other VMs (KWOK nodes) have no drive: they get only CloudStack's record. The bed's
 * teardown deletes loop devices of its ISOs left by a test that stopped half-way (docs/real-node.md).
 */
public final class LoopDeviceIsoDrive implements IsoDrive {
    /** One insert or eject, for the test's timeline. */
    public record Change(Instant at, String vmId, String action, String device, Path iso) {
    }

    private final Set<String> vmsOnThisMachine;
    private final Map<String, Path> isoFiles = new ConcurrentHashMap<>();
    private final Map<String, String> devices = new ConcurrentHashMap<>();
    private final List<Change> changes = new CopyOnWriteArrayList<>();

    public LoopDeviceIsoDrive(Set<String> vmsOnThisMachine) {
        this.vmsOnThisMachine = Set.copyOf(vmsOnThisMachine);
    }

    /** The file behind a CloudStack ISO id (what addKubernetesSupportedVersion's URL would have held). */
    public void setIsoFile(String isoId, Path file) {
        isoFiles.put(isoId, file);
    }

    @Override
    public synchronized void insert(String vmId, String isoId) {
        if (!vmsOnThisMachine.contains(vmId)) {
            return;
        }
        Path file = isoFiles.get(isoId);
        if (file == null) {
            throw new IllegalStateException("no file for ISO " + isoId);
        }
        eject(vmId);
        String device = run("losetup", "--find", "--show", "--read-only", file.toString()).strip();
        devices.put(vmId, device);
        changes.add(new Change(Instant.now(), vmId, "insert", device, file));
    }

    @Override
    public synchronized void eject(String vmId) {
        String device = devices.remove(vmId);
        if (device == null) {
            return;
        }
        run("losetup", "--detach", device);
        changes.add(new Change(Instant.now(), vmId, "eject", device, null));
    }

    public List<Change> changes() {
        return List.copyOf(changes);
    }

    /** The loop device the VM's drive holds now, if any. */
    public Optional<String> device(String vmId) {
        return Optional.ofNullable(devices.get(vmId));
    }

    /** Loop devices of this machine backed by the file, whoever made them. */
    public static List<String> loopDevicesOf(Path file) {
        return run("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE").lines()
                .map(line -> line.strip().split("\\s+", 2))
                .filter(fields -> fields.length == 2 && fields[1].equals(file.toString())).map(fields -> fields[0]).toList();
    }

    private static String run(String... command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output.strip());
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command) + " could not run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
