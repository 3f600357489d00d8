package dev.cks.nodeops.common;

import java.time.Clock;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

/** The one clock production code reads time from; tests construct logic with a fixed or moving clock. */
@ApplicationScoped
public class ClockProducer {
    @Produces
    @ApplicationScoped
    Clock clock() {
        return Clock.systemUTC();
    }
}
