package dev.cks.nodeops.testbed;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A process whose wall clock is shifted, as on a node whose clock is off: libfaketime (Debian's
 * {@code libfaketime}) preloaded. Only the wall clock moves: the JVM's monotonic clock stays the host's, and
 * libfaketime's own fix of timed waits on the monotonic clock is off — with it (the default of libfaketime 0.9.10) the
 * operator took 60 s instead of 3 s to start and its event loop stalled for seconds at a time.
 */
public final class SkewedClock {
    private static final List<Path> LIBRARIES = List.of(Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
            Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"), Path.of("/usr/lib/faketime/libfaketime.so.1"));

    private SkewedClock() {
    }

    /** The environment of a process whose clock is {@code offset} ahead (negative: behind) of the host's. */
    public static Map<String, String> environment(Duration offset) {
        Path library = LIBRARIES.stream().filter(Files::exists).findFirst().orElseThrow(() -> new IllegalStateException(
                "a test with a shifted clock needs libfaketime, which is not installed (looked at " + LIBRARIES + "): apt-get install libfaketime"));
        return Map.of("LD_PRELOAD", library.toString(), "FAKETIME", (offset.isNegative() ? "" : "+") + offset.toSeconds() + "s",
                "FAKETIME_DONT_FAKE_MONOTONIC", "1", "FAKETIME_FORCE_MONOTONIC_FIX", "0");
    }
}
