package dev.cks.nodeops.cloudstack;

/**
 * What a failed CloudStack write tells about whether CloudStack acted on it. Only a refusal that came
 * before execution is certain; everything else may have happened and is looked up (the VM map, the
 * VM, the key's async jobs) before anything is decided.
 */
public enum WriteFailure {
    /**
     * Turned away before execution, and asking again gets the same answer: a bad parameter (431), a role
     * without the API (432), keys CloudStack does not accept (401), a permission denied (531), a proxy's
     * 3xx/4xx page. Nothing happened.
     */
    REFUSED,
    /**
     * Turned away before execution, but it may pass: throttled (429, CloudStack's api.throttling or a
     * proxy's limiter), the connection refused before a byte was sent, a proxy that never got the whole
     * request (408). Nothing happened; ask again later.
     */
    REFUSED_FOR_NOW,
    /**
     * CloudStack may have acted: the request may have reached it but no complete answer came back (a
     * read timeout, a dropped connection, a proxy's 5xx page, a truncated or non-JSON 200, a server
     * error), or its job was still running when the wait ended.
     */
    UNKNOWN;

    public static WriteFailure of(CloudStackException failure) {
        int status = failure.httpStatus();
        Integer code = failure.errorCode();
        return switch (failure.kind()) {
            case TRANSPORT_ERROR -> failure.requestNeverSent() ? REFUSED_FOR_NOW : UNKNOWN;
            case HTTP_ERROR -> status == 429 || status == 408 ? REFUSED_FOR_NOW
                    : status >= 500 || status >= 200 && status < 300 ? UNKNOWN : REFUSED;
            // ApiServer.handleRequest answers a command's own refusal with its code; a 5xx other than a
            // permission denied (531) is an exception it could not classify, possibly after the command
            // did part of its work (a synchronous command) or queued its job.
            case API_ERROR -> status == 429 || code != null && code == CloudStackException.API_LIMIT_EXCEEDED ? REFUSED_FOR_NOW
                    : (status >= 500 || code != null && code >= 500) && !isPermissionDenied(code) ? UNKNOWN : REFUSED;
            case JOB_TIMEOUT -> UNKNOWN;
            // CloudStack ran it to its end and it failed: certain, nothing to look up.
            case JOB_FAILED -> REFUSED;
        };
    }

    private static boolean isPermissionDenied(Integer code) {
        return code != null && code == CloudStackException.ACCOUNT_ERROR;
    }
}
