package dev.cks.nodeops.cloudstack;

import java.time.Duration;

/** Waits between retries and job polls; injected so tests move time instead of waiting. */
@FunctionalInterface
public interface Sleeper {

    Sleeper REAL = duration -> Thread.sleep(duration.toMillis());

    void sleep(Duration duration) throws InterruptedException;
}
