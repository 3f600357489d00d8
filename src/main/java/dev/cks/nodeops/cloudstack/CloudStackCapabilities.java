package dev.cks.nodeops.cloudstack;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What listCapabilities tells the API key (ManagementServerImpl.listCapabilities).
 *
 * @param cloudStackVersion e.g. {@code 4.20.1.0}; null when the server hides it
 *        ({@code expose.cloudstack.version.api.list.capabilities = false})
 * @param mayExpungeVms {@code allow.user.expunge.recover.vm} for the key's account, or the key is an
 *        admin's: exactly when destroyVirtualMachine accepts {@code expunge=true} from this key
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record CloudStackCapabilities(
        @JsonProperty("cloudstackversion") String cloudStackVersion,
        @JsonProperty("allowuserexpungerecovervm") Boolean mayExpungeVms,
        @JsonProperty("kubernetesserviceenabled") Boolean kubernetesServiceEnabled) {

    /** What is assumed when the key may not call listCapabilities: nothing beyond a plain user's rights. */
    public static final CloudStackCapabilities UNKNOWN = new CloudStackCapabilities(null, false, null);

    public boolean mayExpunge() {
        return Boolean.TRUE.equals(mayExpungeVms);
    }
}
