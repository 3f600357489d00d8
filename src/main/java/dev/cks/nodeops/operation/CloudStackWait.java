package dev.cks.nodeops.operation;

import dev.cks.nodeops.cloudstack.CloudStackException;

/** Why an operation waits for CloudStack: the reason of its Waiting condition and of the event that announces it. */
public final class CloudStackWait {
    /** CloudStack did not answer, turned a request away for now, or its Secret is missing or unusable. */
    public static final String UNAVAILABLE = "CloudStackUnavailable";
    /**
     * CloudStack refused the keys (errorcode 401). Waiting alone does not end this one: a person must fix
     * the Secret (or the clock), so it is announced as a Warning.
     */
    public static final String CREDENTIALS_REJECTED = "CloudStackCredentialsRejected";

    private CloudStackWait() {
    }

    /** The reason to wait after {@code failure}, which kept CloudStack from answering. */
    public static String reason(RuntimeException failure) {
        return failure instanceof CloudStackException e && e.isAuthenticationFailure() ? CREDENTIALS_REJECTED : UNAVAILABLE;
    }
}
