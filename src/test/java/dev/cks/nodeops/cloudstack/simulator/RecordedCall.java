package dev.cks.nodeops.cloudstack.simulator;

import java.util.Map;

/**
 * One request the simulator received, with the API key, signature and expiry left out so tests
 * can compare parameters directly. {@code authenticated} is false for a refused signature.
 */
public record RecordedCall(String httpMethod, String command, Map<String, String> params, boolean authenticated) {

    public String param(String name) {
        return params.get(name);
    }
}
