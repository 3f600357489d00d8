package dev.cks.nodeops.realnode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What the kernel of this machine (the real node's host) says about a container's process. */
final class RealProcesses {
    private RealProcesses() {
    }

    /** The container's first process: the lowest PID whose cgroup path names the container id. */
    static long pidOfContainer(String containerId) throws IOException {
        String id = containerId.substring(containerId.indexOf("://") + 3);
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .filter(p -> read(p.resolve("cgroup")).contains(id))
                    .mapToLong(p -> Long.parseLong(p.getFileName().toString())).min()
                    .orElseThrow(() -> new IllegalStateException("no process of container " + id + " on this machine"));
        }
    }

    /** A field of /proc/PID/status, e.g. Uid: "185\t185\t185\t185". */
    static String status(long pid, String field) {
        return read(Path.of("/proc", Long.toString(pid), "status")).lines().filter(l -> l.startsWith(field + ":"))
                .map(l -> l.substring(field.length() + 1).strip()).findFirst().orElseThrow();
    }

    /** The mount options of the process's root, from its mountinfo. */
    static String rootMountOptions(long pid) {
        return read(Path.of("/proc", Long.toString(pid), "mountinfo")).lines().map(l -> l.split(" "))
                .filter(f -> f[4].equals("/")).map(f -> f[5]).findFirst().orElseThrow();
    }

    static String commandLine(long pid) {
        return read(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' ');
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return "";
        }
    }
}
