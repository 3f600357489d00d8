package dev.cks.nodeops.drain;

/** Told what each eviction (or delete) request got, for metrics: `evicted`, `gone`, `blocked` (a 429) or `error`. */
@FunctionalInterface
public interface EvictionListener {
    EvictionListener NONE = result -> {
    };

    void answered(String result);
}
