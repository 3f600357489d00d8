package dev.cks.nodeops.cloudstack;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A clock that only moves when something sleeps on it; records every sleep. */
public final class ManualTime extends Clock implements Sleeper {

    private volatile Instant now;
    private final List<Duration> sleeps = new CopyOnWriteArrayList<>();

    public ManualTime(Instant start) {
        this.now = start;
    }

    public ManualTime() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Override
    public void sleep(Duration duration) {
        sleeps.add(duration);
        advance(duration);
    }

    public synchronized void advance(Duration duration) {
        now = now.plus(duration);
    }

    public List<Duration> sleeps() {
        return List.copyOf(sleeps);
    }

    public Duration totalSlept() {
        return sleeps.stream().reduce(Duration.ZERO, Duration::plus);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
